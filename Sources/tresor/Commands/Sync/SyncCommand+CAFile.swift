import ArgumentParser
import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

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
        let unreadable = ValidationError("--ca-file \(path): not a readable file of at most 1 MiB")
        // A CA file is public, and often a link (/etc/ssl/certs): followed, and read as any file
        // — a regular one only (a FIFO or /dev/zero would never end), up to 1 MiB.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw unreadable }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw unreadable }
        let bytes = Data(readingToEndOf: fd, upTo: (1 << 20) + 1)
        guard bytes.count <= 1 << 20 else { throw unreadable }
        guard let text = String(data: bytes, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw ValidationError("--ca-file \(path): not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return text
    }
}
