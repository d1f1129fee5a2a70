// Fuzzes certificate parsing: SystemRoots' reading of a CA file (PEM blocks, or one DER
// certificate) and CertificateAttributes.fill, which derives an item's attributes from the
// DER (swift-certificates' parser, subject/issuer re-encoding, RFC 4514 summary with every
// directory string type, subjectPublicKey hash). Reached through the public
// SystemRoots(directory:) with the input as the one `.pem` file of a folder.
//
// Properties besides "never crash": every certificate SystemRoots lists has the attributes
// fill derives (type, DER encoding, subject, issuer, serial, key hash, a label), and is found
// again by a query on its own attributes.
import Foundation
import FuzzSupport
import TresorKeychain

let folder = makeScratchFolder("certificates")
let file = folder.appendingPathComponent("input.pem")

fuzz { data in
    writeFile(data, to: file)
    let roots = SystemRoots(directory: folder)
    guard roots.count > 0 else { return }
    let everything: [KeychainItem]
    do {
        everything = try roots.copyMatching(ItemQuery(.certificate, limit: .all, returnData: true))
    } catch {
        fuzzFailure("System Roots lists \(roots.count) certificates but a query for all fails: \(error)")
    }
    guard everything.count == roots.count else {
        fuzzFailure("System Roots lists \(roots.count) certificates but a query for all finds \(everything.count)")
    }
    for item in everything {
        guard let attributes = item.attributes, let der = item.secret, !der.isEmpty else {
            fuzzFailure("a System Roots item came back without attributes or data")
        }
        guard [1, 2, 3].contains(attributes.certificateType), attributes.certificateEncoding == 3,
            attributes.subject != nil, attributes.issuer != nil, attributes.serialNumber != nil,
            attributes.publicKeyHash?.count == 20, attributes.label != nil, attributes.subjectSummary != nil
        else {
            fuzzFailure("a certificate's derived attributes are incomplete: \(attributes)")
        }
        // Found again by its primary key plus the text attributes: matching must agree with fill.
        var query = ItemQuery(.certificate, limit: .all)
        query.attributes.issuer = attributes.issuer
        query.attributes.serialNumber = attributes.serialNumber
        query.attributes.subjectSummary = attributes.subjectSummary
        query.attributes.label = attributes.label
        query.attributes.subjectKeyID = attributes.subjectKeyID
        guard let found = try? roots.copyMatching(query), found.contains(where: { $0.id == item.id }) else {
            fuzzFailure("a certificate is not found by its own attributes: \(attributes)")
        }
    }
}
