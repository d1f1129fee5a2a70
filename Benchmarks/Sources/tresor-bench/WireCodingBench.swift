import Foundation
import TresorKit
import TresorProtocol

/// The JSON of one lookup, measured alone: what the client's and the daemon's coders (the
/// API's own, `APICoding`) spend on a `SearchItemsRequest` and its `ItemsResponse`, in a hot
/// loop — best of five rounds of `repetitions` each. Inside a round trip, with the caches cold
/// between requests, the same work costs more (BENCHMARKS.md §1).
struct WireCodingBench {
    let repetitions: Int

    func run() throws -> [String: Any] {
        var query = ItemQuery(.genericPassword, attributes: ItemAttributes())
        query.attributes.service = KeychainBench.service
        query.attributes.account = "acct-1234"
        (query.limit, query.returnData, query.returnAttributes) = (.one, true, false)
        let request = SearchItemsRequest(query: query)
        let response = ItemsResponse(items: [
            KeychainItem(id: "1234567890123456789", itemClass: .genericPassword, attributes: nil, secret: Data(repeating: 0x5A, count: 32))
        ])
        let encoder = APICoding.encoder, decoder = APICoding.decoder, requestDecoder = APICoding.requestDecoder
        let requestJSON = try encoder.encode(request), responseJSON = try encoder.encode(response)
        let result: [String: Any] = [
            "client_encode_request_us": try best { _ = try encoder.encode(request) },
            "daemon_decode_request_us": try best { _ = try requestDecoder.decode(SearchItemsRequest.self, from: requestJSON) },
            "daemon_encode_response_us": try best { _ = try encoder.encode(response) },
            "client_decode_response_us": try best { _ = try decoder.decode(ItemsResponse.self, from: responseJSON) },
            "request_bytes": requestJSON.count, "response_bytes": responseJSON.count,
        ]
        log("wire coding of a lookup (µs): \(result)")
        return result
    }

    /// Microseconds per call: the best of five rounds, after a warm-up.
    private func best(_ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<min(1000, repetitions) { try body() }
        var best = Double.infinity
        for _ in 0..<5 {
            let start = nowNanos()
            for _ in 0..<repetitions { try body() }
            best = min(best, Double(nowNanos() - start) / 1e3 / Double(repetitions))
        }
        return best
    }
}
