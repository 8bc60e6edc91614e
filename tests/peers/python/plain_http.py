"""What bearer_server.py and oauth_server.py share: a JSON handler on
Python's standard library, whose request lines reach stdout whole.

    from plain_http import JsonHandler, say, serve
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Requests are handled on threads: one line at a time, whole.
SAYING = threading.Lock()


def say(line):
    """Prints one line to stdout, flushed, never interleaved."""
    with SAYING:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class JsonHandler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1 with JSON bodies, and no log of its own on
    stderr (the tests read what `say` prints)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


def serve(handler, on_listening):
    """Listens on a free loopback port; `on_listening(base)` is called with
    `http://127.0.0.1:PORT` before the first request is taken."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    on_listening(f"http://127.0.0.1:{server.server_address[1]}")
    server.serve_forever()
