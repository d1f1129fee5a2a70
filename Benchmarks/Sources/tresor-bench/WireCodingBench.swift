import Foundation
import TresorKit
import TresorProtocol

/// The JSON of one lookup, measured alone: what the client's and the daemon's coders (the
/// API's own, `APICoding`) spend on a `SearchItemsRequest` and its `ItemsResponse`, in a hot
/// loop — best of five rounds of `repetitions` each; and the same for a find by label, whose
/// answer is the item's attributes (`find_…`), in JSON and as TresorKit asks it now, by
/// `GET /v1/items/attributes` answered in bytes (`find_route_…`). Inside a round trip, with the caches cold
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
        var find = ItemQuery(.genericPassword, attributes: ItemAttributes())
        find.attributes.label = "label-1234"
        (find.limit, find.returnData, find.returnAttributes) = (.all, false, true)
        let findRequest = SearchItemsRequest(query: find)
        var attributes = KeychainBench.attributes(1234)
        (attributes.accessGroup, attributes.accessible, attributes.synchronizable) = (KeychainBench.appID, .whenUnlocked, false)
        (attributes.creationDate, attributes.modificationDate) = (Date(), Date())
        let found = ItemsResponse(items: [KeychainItem(id: "1234567890123456789", itemClass: .genericPassword, attributes: attributes, secret: nil)])
        let findJSON = try encoder.encode(findRequest), foundJSON = try encoder.encode(found)
        let findPath = ItemSecretQuery.attributesPath(for: find)!, foundBytes = Data(ItemAttributesList.encode([attributes]))
        let findResult: [String: Any] = [
            "find_client_encode_request_us": try best { _ = try encoder.encode(findRequest) },
            "find_daemon_decode_request_us": try best { _ = try requestDecoder.decode(SearchItemsRequest.self, from: findJSON) },
            "find_daemon_encode_response_us": try best { _ = try encoder.encode(found) },
            "find_client_decode_response_us": try best { _ = try decoder.decode(ItemsResponse.self, from: foundJSON) },
            "find_request_bytes": findJSON.count, "find_response_bytes": foundJSON.count,
            // The same find as TresorKit asks it: `GET /v1/items/attributes`, answered in bytes.
            "find_route_client_path_us": best { _ = ItemSecretQuery.attributesPath(for: find) },
            "find_route_daemon_parse_us": try best {
                _ = try ItemSecretQuery.parseAttributesQuery(String(findPath.dropFirst(Route.itemAttributes.count + 1)))
            },
            "find_route_daemon_encode_response_us": best { _ = ItemAttributesList.encode([attributes]) },
            "find_route_client_decode_response_us": try best { _ = try ItemAttributesList.decode(foundBytes) },
            "find_route_response_bytes": foundBytes.count,
        ]
        log("wire coding of a lookup (µs): \(result); of a find by label: \(findResult)")
        return result.merging(findResult) { $1 }
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
