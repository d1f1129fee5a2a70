import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// Which clients are told a refusal as the error of their `Prompt` call (``HeldPromptCalls``):
/// libsecret's — secret-tool, git's helper, the programs linking it — which prints the error
/// and fails the operation. The others are told as every provider tells them, with a dismissed
/// prompt: Python's secretstorage raises an error answering `Prompt` as one of jeepney's, which
/// the applications above it (keyring, catching its `KeyringError`) do not catch, while a
/// dismissal is the `KeyringLocked` they handle.
enum PromptErrorReaders {
    /// Whether process `pid` has libsecret loaded (its mappings name `libsecret-1.so`).
    static func readPromptErrors(pid: Int32?) -> Bool {
        guard let pid else { return false }
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // Read to the end: /proc files say they are empty, so reading by their size gets nothing.
        return Data(readingToEndOf: fd).range(of: Data("/libsecret-1.so".utf8)) != nil
    }
}
