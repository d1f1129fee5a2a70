import Foundation
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

extension TestUser {
    /// The test's binaries where this user can run them: hard links (copies across file systems)
    /// in a folder of their own, made once per test process, since the build folder's parents need
    /// not be open to other users. Never given to the user: a link is the build's own file.
    static let binaries: Result<URL, any Error> = Result {
        let folder = URL(fileURLWithPath: "/var/tmp/tresor-e2e-bin-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: "/var/tmp/tresor-e2e-bin-\(getpid())") }
        for name in ["tresor", "tresord"] {
            let source = Harness.binaries.appendingPathComponent(name), target = folder.appendingPathComponent(name)
            if (try? FileManager.default.linkItem(at: source, to: target)) == nil {
                try FileManager.default.copyItem(at: source, to: target)
            }
        }
        chmod(folder.path, 0o755)
        return folder
    }
}
