"""An MCP server over Streamable HTTP (plain JSON replies, no session)
that answers only requests bearing one access token, for the tokens test:
any other request gets 401 with a `WWW-Authenticate: Bearer` challenge, as
a protected resource does. Python's standard library alone.

    python3 bearer_server.py TOKEN

Prints `listening on http://127.0.0.1:PORT/mcp`, then one line per request:
`METHOD PATH ok` or `METHOD PATH 401 (none|wrong)` (never the token).
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = sys.argv[1]


# Requests are handled on threads: one line at a time, whole.
SAYING = threading.Lock()


def say(line):
    with SAYING:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
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

    def authorized(self):
        given = self.headers.get("Authorization")
        if given == f"Bearer {TOKEN}":
            say(f"{self.command} {self.path} ok")
            return True
        say(f"{self.command} {self.path} 401 ({'none' if given is None else 'wrong'})")
        port = self.server.server_address[1]
        metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        self.reply(401, {"error": "invalid_token"}, [("WWW-Authenticate", f'Bearer resource_metadata="{metadata}"')])
        return False

    def do_GET(self):
        if self.path.startswith("/.well-known/"):
            say(f"GET {self.path} 404")
            self.reply(404, {"error": "not found"})
        elif self.authorized():
            # No stream of server-initiated messages.
            self.reply(405, None, [("Allow", "POST")])

    def do_DELETE(self):
        if self.authorized():
            self.reply(405, None, [("Allow", "POST")])

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.authorized():
            return
        message = json.loads(body or b"{}")
        if "id" not in message:
            self.reply(202)
            return
        method = message.get("method")
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", "2025-06-18")
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bearer-server", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": []}
        elif method == "ping":
            result = {}
        else:
            self.reply(200, {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": method}})
            return
        self.reply(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
say(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp")
server.serve_forever()
