import Foundation
import TresorProtocol

/// The API's JSON coders (``APICoding``'s conventions), made once for the whole socket API
/// (the web server keeps its own pair): they are thread-safe, and making them anew per request was
/// a measurable part of a keychain lookup (BENCHMARKS.md §1). Requests are read with
/// ``APICoding/requestDecoder``, which refuses attribute names the keychain does not know.
enum DaemonJSON {
    static let decoder = APICoding.requestDecoder
    static let encoder = APICoding.encoder
}
