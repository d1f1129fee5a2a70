import FoundationEssentials
import TresorModel

/// The JSON conventions of the API, used by the daemon and every client: dates as seconds
/// since 1970, binary values as Base64 strings (a transport encoding, not protection).
public enum APICoding {
    /// A new encoder for the API's JSON: dates as seconds since 1970, binary values as Base64,
    /// keys sorted.
    public static var encoder: JSONEncoder { JSONStyle.secondsSince1970.encoder }

    /// A new decoder for the API's JSON: dates as seconds since 1970, binary values as Base64.
    public static var decoder: JSONDecoder { JSONStyle.secondsSince1970.decoder }

    /// The daemon's decoder for requests: ``decoder``, refusing attribute names the keychain
    /// does not know (``ItemAttributes/refusesUnknownNames``) — a misspelt `acount` would
    /// otherwise be dropped and widen a query or a delete.
    public static var requestDecoder: JSONDecoder {
        let decoder = self.decoder
        decoder.userInfo[ItemAttributes.refusesUnknownNames] = true
        return decoder
    }
}
