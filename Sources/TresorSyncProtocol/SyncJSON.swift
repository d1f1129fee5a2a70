import Foundation
import TresorModel

/// How sync's JSON is written and read on both sides: dates in ISO 8601, bytes in base64,
/// counters as numbers.
public enum SyncJSON {
    public static var encoder: JSONEncoder { JSONStyle.iso8601.encoder }
    public static var decoder: JSONDecoder { JSONStyle.iso8601.decoder }
}
