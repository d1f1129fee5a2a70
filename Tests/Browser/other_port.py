"""Another local user's web server on another port of 127.0.0.1 (docs/SECURITY.md §3.12).

Browsers scope cookies by host, not by port: every cookie Tresor sets for 127.0.0.1 is also
sent here, and a `Set-Cookie` from here lands in the same jar Tresor's page uses. The server
records the cookies it receives and, on `/plant?token=…&path=…`, sets a `tresor_session`
cookie of its choosing — what an attacker on the same machine can do without any bug.
"""

import http.server
import threading
import urllib.parse


class OtherPortServer:
    def __init__(self):
        self.received_cookies: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                with server._lock:
                    server.received_cookies.append(self.headers.get("Cookie", ""))
                parts = urllib.parse.urlsplit(self.path)
                body = b"<!doctype html><title>another local user's page</title><p>hello</p>"
                self.send_response(200)
                if parts.path == "/plant":
                    query = urllib.parse.parse_qs(parts.query)
                    token, path = query["token"][0], query.get("path", ["/"])[0]
                    self.send_header("Set-Cookie", f"tresor_session={token}; Path={path}; SameSite=Lax")
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def session_tokens(self) -> list[str]:
        """Every `tresor_session` value this server was sent."""
        with self._lock:
            cookies = list(self.received_cookies)
        return [pair.strip().split("=", 1)[1] for header in cookies for pair in header.split(";")
                if pair.strip().startswith("tresor_session=")]

    def close(self):
        self._server.shutdown()
        self._server.server_close()
