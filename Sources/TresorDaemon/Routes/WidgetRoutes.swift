import Foundation
import Hummingbird
import TresorProtocol
import TresorWebServer

/// `GET /v1/widget`: the local account's widget for `tresor widget` (docs/WEB.md), redacted by
/// the same rules as the browser's. The `tresor` CLI only.
struct WidgetRoutes {
    let widget: WidgetBuilder
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        let widget = self.widget, callers = self.callers
        router.get(RouterPath(Route.widget)) { _, context -> Widget in
            try callers.requireCLI(try context.requireClient(), toManage: "notes")
            return try await widget.widget(for: .local)
        }
    }
}

extension Widget: ResponseEncodable {}
