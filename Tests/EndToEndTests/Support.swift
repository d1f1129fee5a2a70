import TresorKit

/// A TresorKit client of a harness's daemon, never starting one.
enum TresorKitClient {
    static func connect(_ harness: Harness) throws -> TresorClient {
        try TresorClient.connect(paths: harness.paths, startDaemon: false)
    }
}
