import Foundation
import TresorModel

/// An attachment as listed (kinds as the store names them: `image`, `map-location`, …).
struct WebAttachment: Encodable, Sendable {
    var id: String
    var kind: String
    var name: String
    var byteCount: Int
    var created: Date

    init(_ info: AttachmentInfo) {
        id = info.id
        kind = info.kind.rawValue
        name = info.name
        byteCount = info.byteCount
        created = info.created
    }
}
