import ArgumentParser
import FoundationEssentials

extension SyncCommand {
    static let caFileHelp = ArgumentHelp(
        "A PEM file of the certificate authority that issued the server's certificate: this device then trusts that CA only, not the system's.",
        valueName: "PEM")

    /// The PEM text of `--ca-file`, read here (the daemon may not see the user's files); the
    /// daemon checks it holds certificates.
    /// - Parameter path: the option's value, if given.
    /// - Returns: the file's text, or nil without the option.
    /// - Throws: `ValidationError` for a file that cannot be read or is not text.
    static func certificateAuthorities(_ path: String?) throws -> String? {
        guard let path else { return nil }
        // A CA file is public, and often a link (/etc/ssl/certs): read as any file, up to 1 MiB.
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? any BinaryInteger).map { Int($0) }
        guard let size, size <= 1 << 20, let bytes = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--ca-file \(path): not a readable file of at most 1 MiB")
        }
        guard let text = String(data: bytes, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw ValidationError("--ca-file \(path): not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return text
    }
}
