"""A recording HTTP proxy between Chromium and tresord.

Chromium is started with `--proxy-server` pointing here (and `--proxy-bypass-list=<-loopback>`,
so even 127.0.0.1 goes through us). Every request the browser makes — method, URL, headers and
every byte of its body — is kept, so a test can assert that no request carried a passphrase or
a key. The proxy is a forward proxy: the request reaches the daemon unchanged (same Host, same
Origin), so the server's CSRF and origin checks see exactly what the browser sent.
"""

import http.client
import http.server
import threading
import urllib.parse
from dataclasses import dataclass, field

# Headers that belong to one hop and must not be forwarded.
HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "transfer-encoding", "te", "trailer",
              "upgrade", "proxy-authorization", "proxy-authenticate"}


@dataclass
class RecordedRequest:
    method: str
    url: str
    headers: dict
    body: bytes
    status: int = 0
    response: bytes = field(default=b"", repr=False)

    @property
    def path(self):
        return urllib.parse.urlsplit(self.url).path

    def carries(self, needle: bytes) -> bool:
        """Whether `needle` appears in the URL, a header or the body (raw bytes)."""
        if needle in self.body or needle in self.url.encode() or needle in urllib.parse.unquote_to_bytes(self.url):
            return True
        return any(needle in f"{k}: {v}".encode() for k, v in self.headers.items())


class RecordingProxy:
    """Forwards to one upstream (`127.0.0.1:upstream_port`) — and to the loopback ports a test
    adds with `allow` (another local user's server) — and refuses everything else."""

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.upstream_ports = {upstream_port}
        self.requests: list[RecordedRequest] = []
        self.refused: list[str] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the test output is the report
                pass

            def do_CONNECT(self):
                # Chromium's own background traffic: nothing leaves the machine.
                with proxy._lock:
                    proxy.refused.append("CONNECT " + self.path)
                try:
                    self.send_error(405)
                except OSError:
                    pass

            def _relay(self):
                url = self.path
                parts = urllib.parse.urlsplit(url)
                body = self._read_body()
                if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.port not in proxy.upstream_ports:
                    with proxy._lock:
                        proxy.refused.append(f"{self.command} {url}")
                    self.send_response(502)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"}
                record = RecordedRequest(self.command, url, headers, body)
                with proxy._lock:
                    proxy.requests.append(record)
                target = parts.path + (("?" + parts.query) if parts.query else "")
                upstream = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=60)
                try:
                    upstream.putrequest(self.command, target, skip_host=True, skip_accept_encoding=True)
                    for k, v in headers.items():
                        upstream.putheader(k, v)
                    if body or self.command in ("POST", "PUT", "PATCH"):
                        upstream.putheader("Content-Length", str(len(body)))
                    upstream.endheaders(body if body else None)
                    answer = upstream.getresponse()
                    if answer.getheader("Content-Type", "").startswith("text/event-stream"):
                        self._relay_stream(answer, record)
                        return
                    payload = answer.read()
                except OSError as error:
                    record.status = 502
                    self.send_response(502)
                    message = f"proxy: upstream failed: {error}".encode()
                    self.send_header("Content-Length", str(len(message)))
                    self.end_headers()
                    self.wfile.write(message)
                    return
                finally:
                    upstream.close()
                record.status, record.response = answer.status, payload
                self.send_response_only(answer.status, answer.reason)
                for k, v in answer.getheaders():
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            def _relay_stream(self, answer, record):
                """Live updates (text/event-stream): passed on piece by piece as they come,
                recorded as they pass, until either side closes."""
                record.status, record.response = answer.status, b""
                self.send_response_only(answer.status, answer.reason)
                for k, v in answer.getheaders():
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while True:
                        piece = answer.read1(65536)
                        if not piece:
                            break
                        record.response += piece
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (OSError, ValueError, http.client.HTTPException):
                    pass  # the page or the daemon went away: the stream ends
                self.close_connection = True

            def _read_body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        line = self.rfile.readline()
                        if not line.strip():
                            return b"".join(chunks)  # the client went away mid-body
                        size = int(line.split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _relay

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                # A browser closing a kept-alive connection is normal; anything else is shown.
                import sys
                if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                    super().handle_error(request, client_address)

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def allow(self, port: int):
        """Lets the browser reach another loopback port too (a test's second server)."""
        self.upstream_ports.add(port)

    def snapshot(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self.requests)

    def carrying(self, needle: bytes) -> list[RecordedRequest]:
        """Every recorded request that carried `needle` anywhere."""
        return [r for r in self.snapshot() if r.carries(needle)]

    def close(self):
        self._server.shutdown()
        self._server.server_close()
