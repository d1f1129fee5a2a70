import Foundation

/// Runs the notes store's blocking work (a PBKDF2 run, a write transaction) on a Dispatch
/// thread, so Swift concurrency's few threads keep serving requests meanwhile.
func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            continuation.resume(with: Result { try work() })
        }
    }
}
