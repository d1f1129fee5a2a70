import Foundation
import Hummingbird
import NIOCore
import TresorProtocol
import TresorWebClient

/// The web client's files (`Web/static`, shipped as package resources): `/` is `index.html`,
/// `/widget` is `widget.html`, `/static/<path>` is the file at `<path>`.
///
/// A path is served only when every segment is plain (letters, digits, `.`, `_`, `-`, not
/// starting with a dot): no `..`, no percent-encoding (so no encoded slash or NUL), no
/// backslash. The resolved file must be a regular file inside the folder after symlinks are
/// followed. Anything else is the same JSON 404 as an unknown route.
struct StaticFileRoutes {
    let folder: URL

    init(folder: URL = WebClient.staticFolder) {
        self.folder = folder.resolvingSymlinksInPath()
    }

    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
        "png": "image/png",
        "jpg": "image/jpeg",
        "ico": "image/x-icon",
        "json": "application/json",
        "woff2": "font/woff2",
        "txt": "text/plain; charset=utf-8",
    ]

    func register(on router: Router<WebRequestContext>) {
        router.get("/") { _, _ in try serve("index.html") }
        router.get("/widget") { _, _ in try serve("widget.html") }
        router.get("/static/**") { request, _ in
            try serve(String(request.uri.path.dropFirst("/static/".count)))
        }
    }

    /// The file at `relativePath` under the folder, or `404 notFound`.
    func serve(_ relativePath: String) throws -> Response {
        guard let file = resolve(relativePath),
            let type = Self.contentTypes[file.pathExtension.lowercased()],
            let handle = FileHandle(forReadingAtPath: file.path)
        else { throw Self.notFound }
        defer { try? handle.close() }
        guard let data = try handle.read(upToCount: WebLimits.staticFileBytes + 1), data.count <= WebLimits.staticFileBytes else {
            throw Self.notFound
        }
        return Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The file a request path names, when it is a plain path to a regular file inside the folder.
    func resolve(_ relativePath: String) -> URL? {
        let segments = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.isEmpty, segments.count <= 8, segments.allSatisfy(Self.isPlainSegment) else { return nil }
        let candidate = folder.appendingPathComponent(segments.joined(separator: "/")).resolvingSymlinksInPath()
        guard candidate.path.hasPrefix(folder.path + "/") else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
        return candidate
    }

    static func isPlainSegment(_ segment: Substring) -> Bool {
        guard let first = segment.first, first != ".", segment.utf8.count <= 128 else { return false }
        return segment.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar)
        }
    }

    static let notFound = APIError(.notFound, "no such page or API route (see docs/WEB.md)")
}
