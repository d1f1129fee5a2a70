import Foundation

/// The web client's files (`Web/static`: HTML, CSS and JavaScript modules, no build step),
/// shipped with the daemon as package resources and served by its web server (docs/WEB.md).
public enum WebClient {
    /// The folder holding `index.html`, `widget.html`, `css/`, `js/` and `img/`.
    public static var staticFolder: URL {
        Bundle.module.resourceURL!.appendingPathComponent("static", isDirectory: true)
    }
}
