import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes connections that hold a slot without using it (docs/WEB.md, "Availability"): one
/// that sends no complete request head within `firstRequestSeconds` of opening or `idleSeconds`
/// of its previous answer (idle keep-alive, or a slowloris dripping header bytes), and one whose request
/// body does not arrive within `requestSeconds` of its head, or whose client stops taking an
/// answer written a piece at a time for `idleSeconds`. While the server works on an answer, no
/// deadline runs. A sync device's attachment upload (gigabytes, docs/SYNC.md, "Attachments") is
/// not cut while its body keeps arriving: for it `requestSeconds` counts from the last piece.
final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let firstRequest: TimeAmount
    let idle: TimeAmount
    let request: TimeAmount
    private var deadline: Scheduled<Void>?
    /// A request head was read and its end not yet.
    private var requestOpen = false
    /// The current request was answered (maybe early, before its body was read: a 401 or 413).
    private var answered = false
    /// The current request's body may take as long as it keeps arriving.
    private var bodyMayTakeLong = false
    /// When the request deadline was last moved on for a piece of such a body.
    private var movedOn = NIODeadline.uptimeNanoseconds(0)

    init(firstRequestSeconds: Int, idleSeconds: Int, requestSeconds: Int) {
        firstRequest = .seconds(Int64(firstRequestSeconds))
        idle = .seconds(Int64(idleSeconds))
        request = .seconds(Int64(requestSeconds))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A browser sends its request as soon as it connects: a connection that sends none
        // holds a slot for nothing.
        arm(context, firstRequest)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestOpen = true
            answered = false
            bodyMayTakeLong = Self.isSyncAttachmentUpload(head)
            movedOn = .now()
            arm(context, request)
        case .body:
            // Moved on at most once a second, not for each piece of a multi-gigabyte body.
            if bodyMayTakeLong && !answered, NIODeadline.now() - movedOn >= .seconds(1) {
                movedOn = .now()
                arm(context, request)
            }
        case .end:
            requestOpen = false
            if answered { arm(context, idle) } else { disarm() }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .end:
            answered = true
            // Answered before the body was all read: the request deadline keeps running.
            if !requestOpen { arm(context, idle) }
        case .body:
            // An answer written a piece at a time (an attachment): the next piece is written only
            // once the client has taken enough of the last, so a client that stops reading is
            // closed `idle` after the last piece, as an idle one is.
            if !requestOpen { arm(context, idle) }
        case .head:
            break
        }
        context.write(data, promise: promise)
    }

    /// `PUT /v1/sync/notes/{note}/attachments/{id}`.
    static func isSyncAttachmentUpload(_ head: HTTPRequest) -> Bool {
        guard head.method == .put, let path = head.path?.split(separator: "?").first else { return false }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 7 && parts[1] == "v1" && parts[2] == "sync" && parts[3] == "notes" && parts[5] == "attachments"
    }

    private func arm(_ context: ChannelHandlerContext, _ after: TimeAmount) {
        disarm()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: after) { channel.close(promise: nil) }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
