import Foundation
import Hummingbird
import NIOCore
import TresorNotesDomain

/// `GET /healthz` for load balancers (docs/WEB.md, "Running a Tresor server"): `200 {"status":
/// "ok"}` while this instance and its storage answer, `503 {"status": "unavailable"}` when the
/// storage does not. No session needed, and nothing about accounts, notes or secrets in it.
struct HealthRoutes {
    static let path = "/healthz"

    let store: any WebStore

    func register(on router: Router<WebRequestContext>) {
        let store = self.store
        router.get(RouterPath(Self.path)) { _, _ -> Response in
            let healthy = (try? await store.checkHealth()) != nil
            return Response(
                status: healthy ? .ok : .serviceUnavailable,
                headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: healthy ? #"{"status":"ok"}"# : #"{"status":"unavailable"}"#)))
        }
    }
}
