// Fuzzes the keybag's file decoder (TresorKeybag's AuthenticatedFile, reached through the public
// Keybag.open(files:)): the `keybag` file and the `unlock-attempts` file of a home whose
// device key is fixed, so the harness can also make inputs that pass the HMAC and reach the
// JSON decoder, the record's class-key unwrapping and the failed-attempt bookkeeping.
//
// Input: mode byte | payload
//   mode bit 0: 0 = the payload is the `keybag` file (no attempts file);
//               1 = the payload is the `unlock-attempts` file, beside a valid keybag
//   mode bit 1: 0 = the payload is written as is (magic, version, MAC and JSON all fuzzed);
//               1 = the payload is the JSON alone, and the harness adds the header and a valid MAC
//   mode bit 2: the valid keybag of bit 0 = 1 has a passcode (else none)
import Crypto
import Foundation
import FuzzSupport
import TresorCrypto
import TresorKeybag
import TresorKit

/// docs/FORMAT.md: magic (4) | version (1) | HMAC-SHA256 (32) | JSON, the MAC over magic, version
/// and JSON, under HKDF(device key, info "tresor.keybag.v1.file-mac.<file>").
struct FileFormat {
    let magic: Data
    let macKey: SymmetricKey

    init(magic: String, macLabel: String, deviceKey: SymmetricKey) {
        self.magic = Data(magic.utf8)
        macKey = KeyDerivation.hkdfSHA256(inputKeyMaterial: deviceKey, salt: Data(), info: "tresor.keybag.v1." + macLabel)
    }

    func sign(_ json: Data) -> Data {
        let header = magic + [1]
        return header + MessageAuthentication.hmacSHA256(header + json, key: macKey) + json
    }

    func json(of file: Data) -> Data { Data(file.dropFirst(magic.count + 1 + 32)) }
}

/// A fixed device key: committed seeds with valid MACs stay valid.
let deviceKeyBytes = Data((0..<32).map { UInt8(0xD0 ^ $0) })
let deviceKey = SymmetricKey(data: deviceKeyBytes)
let keybagFormat = FileFormat(magic: "TRKB", macLabel: "file-mac.keybag", deviceKey: deviceKey)
let attemptsFormat = FileFormat(magic: "TRUA", macLabel: "file-mac.unlock-attempts", deviceKey: deviceKey)

/// A home with the fixed device key; `Keybag.create` there makes a genuine keybag file.
func makeHome(_ name: String) -> KeybagFiles {
    let home = makeScratchFolder(name)
    // The device key's state folder inside the scratch folder too, not in the user's home.
    let files = KeybagFiles(paths: TresorPaths(home: home.path, environment: ["XDG_STATE_HOME": home.path + "/state"]))
    try? FileManager.default.createDirectory(at: files.deviceKey.deletingLastPathComponent(), withIntermediateDirectories: true)
    writeFile(deviceKeyBytes, to: files.deviceKey)
    return files
}

func genuineKeybag(passcode: String?) -> Data {
    let files = makeHome("genuine")
    do {
        let keybag = try Keybag.create(
            files: files, passcode: try passcode.map(Passcode.init), settings: .insecureForTesting(kdfRounds: 1))
        if passcode != nil {
            // Two wrong passcodes, so that an attempts file exists too.
            for wrong in ["wrong-1", "wrong-2"] { try? keybag.unlock(passcode: Passcode(wrong)) }
        }
        return try Data(contentsOf: files.keybag)
    } catch {
        fatalError("cannot create a keybag: \(error)")
    }
}

let validKeybags = [genuineKeybag(passcode: nil), genuineKeybag(passcode: "correct horse")]
let files = makeHome("input")

func seeds() throws -> [String: Data] {
    let home = makeHome("seeds")
    let keybag = try Keybag.create(
        files: home, passcode: Passcode("correct horse"), settings: .insecureForTesting(kdfRounds: 1))
    for wrong in ["wrong-1", "wrong-2", "wrong-3"] { try? keybag.unlock(passcode: Passcode(wrong)) }
    let attempts = try Data(contentsOf: home.unlockAttempts)
    var seeds: [String: Data] = [:]
    for (index, file) in validKeybags.enumerated() {
        let name = index == 0 ? "no-passcode" : "passcode"
        seeds["keybag-raw-\(name)"] = Data([0]) + file
        seeds["keybag-json-\(name)"] = Data([2]) + keybagFormat.json(of: file)
    }
    seeds["attempts-raw"] = Data([1 | 4]) + attempts
    seeds["attempts-json"] = Data([3 | 4]) + attemptsFormat.json(of: attempts)
    seeds["attempts-json-empty"] = Data([3]) + Data(#"{"tags":[]}"#.utf8)
    seeds["attempts-json-five"] = Data([3 | 4]) + Data(#"{"lastFailureAt":1700000000,"tags":["AA==","AQ==","Ag==","Aw==","BA=="]}"#.utf8)
    seeds["keybag-json-minimal"] = Data([2]) + Data(#"{"changedAt":0,"generation":1,"wrappedClassKeys":{}}"#.utf8)
    seeds["keybag-json-bad-wrap"] =
        Data([2]) + Data(#"{"changedAt":0,"generation":1,"wrappedClassKeys":{"always":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}"#.utf8)
    seeds["keybag-json-passcode"] =
        Data([2])
        + Data(#"{"changedAt":1.5,"generation":2,"passcode":{"outputByteCount":32,"rounds":600000,"salt":"c2FsdA=="},"wrappedClassKeys":{}}"#.utf8)
    seeds["keybag-raw-wrong-magic"] = Data([0]) + Data("TRUA".utf8) + validKeybags[0].dropFirst(4)
    seeds["keybag-raw-version-2"] = Data([0]) + Data("TRKB".utf8) + [2] + validKeybags[0].dropFirst(5)
    seeds["keybag-raw-truncated"] = Data([0]) + validKeybags[0].prefix(37)
    return seeds
}

fuzz(seeds: seeds) { data in
    var input = FuzzInput(data)
    let mode = input.byte()
    let attemptsTarget = mode & 1 == 1
    let format = attemptsTarget ? attemptsFormat : keybagFormat
    let file = mode & 2 == 0 ? Data(input.rest) : format.sign(Data(input.rest))

    if attemptsTarget {
        writeFile(validKeybags[Int(mode >> 2) & 1], to: files.keybag)
        writeFile(file, to: files.unlockAttempts)
    } else {
        writeFile(file, to: files.keybag)
        unlink(files.unlockAttempts.path)
    }

    let keybag: Keybag
    do {
        keybag = try Keybag.open(files: files)
    } catch {
        if attemptsTarget {
            // A damaged attempts file is recovered from (a lockout is assumed), never fatal.
            fuzzFailure("the attempts file made a valid keybag unopenable: \(error)")
        }
        return
    }
    let status = keybag.status
    guard status.failedAttempts >= 0, (status.retryAfterSeconds ?? 0) >= 0, (status.retryAfterSeconds ?? 0) <= 3600 else {
        fuzzFailure("impossible status \(status)")
    }
    if status.attemptsFileDamaged && status.failedAttempts < 5 {
        fuzzFailure("a damaged attempts file must count as five failures, not \(status.failedAttempts)")
    }
    if attemptsTarget && mode & 2 == 0 && file.count <= 37 && !status.attemptsFileDamaged {
        fuzzFailure("a \(file.count)-byte attempts file was accepted")
    }
    for protectionClass in ProtectionClass.allCases {
        if let key = try? keybag.classKey(for: protectionClass), key.bitCount < 128 {
            fuzzFailure("a \(key.bitCount)-bit class key came out of the keybag")
        }
    }
    // Without a passcode set this unwraps every class; with one it must refuse without a KDF run.
    try? keybag.unlock(passcode: nil)
    keybag.lock()
    _ = keybag.status
}
