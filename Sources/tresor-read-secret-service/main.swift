// tresor-read-secret-service
//
// Reads every item of the Secret Service provider that owns org.freedesktop.secrets on the
// session bus (gnome-keyring, KeePassXC) and writes them as JSON (`SecretServiceExport`, the
// API's date and data encodings) on standard output, for `tresor import secret-service`. The
// `tresor` CLI links no libdbus, so this process of its own speaks D-Bus; it holds no key and
// no connection to the daemon, and changes nothing in the provider (a collection it had to
// unlock is locked again). Secrets go to standard output only; a failure is reported on
// standard error, without any secret, with exit status 1; a wrong invocation exits with 2.
import FoundationEssentials
import TresorDBus
import TresorModel
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, status: Int32) -> Never {
    _ = Data((message + "\n").utf8).write(toDescriptor: 2)
    exit(status)
}

guard CommandLine.arguments.count == 1 else {
    fail("usage: tresor-read-secret-service  (run by `tresor import secret-service`; reads the session bus of DBUS_SESSION_BUS_ADDRESS)", status: 2)
}
// No core file of a process full of secrets. (Not PR_SET_DUMPABLE as the daemon does: a
// provider may identify its client by /proc/<pid>/exe, which that would hide from it.)
var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
_ = setrlimit(Int32(RLIMIT_CORE.rawValue), &noCore)

do {
    let export = try SecretServiceReader(environment: ProcessInfo.processInfo.environment).read()
    if let error = try APICoding.encoder.encode(export).write(toDescriptor: 1) {
        fail("cannot write the items to standard output (errno \(error))", status: 1)
    }
} catch let error as SecretServiceReader.Failure {
    fail(error.description, status: 1)
} catch let error as DBusError {
    // The provider's or the bus's words: error names and messages, never a secret we hold.
    fail("the Secret Service provider failed: \(error)", status: 1)
} catch {
    fail("cannot read the Secret Service: \(error)", status: 1)
}
