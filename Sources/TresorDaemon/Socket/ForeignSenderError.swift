/// Bytes on a connection that the connected process did not send.
struct ForeignSenderError: Error, CustomStringConvertible {
    let sender: Int32
    let peer: Int32
    let peerExited: Bool

    var description: String {
        peerExited
            ? "bytes from process \(sender) after the connected process \(peer) exited"
            : "bytes from process \(sender) on the connection of process \(peer)"
    }
}
