"""A bulk MCP server for elicit-bench's throughput figure (standard library only).

Answers `initialize`, and every `tools/call` of `bulk` with a result whose
text is `arguments.bytes` bytes long (default 100 000). The result body is
built once per size and only the id changes, so that the server spends
its time writing, not building JSON: the figure is about the pipe between
it and the host.

With `--http` it serves the same over Streamable HTTP (JSON responses, a
session id, keep-alive) on 127.0.0.1 and prints `listening on URL`: the
floor of the HTTP figures, which compare a host speaking HTTP to it
directly with one going through `elicit proxy --url`.
"""

import http.server
import json
import sys

out = sys.stdout.buffer
bodies = {}


def body(size):
    """`,"result":{…}}` plus the newline, for a text of `size` bytes."""
    if size not in bodies:
        result = {"content": [{"type": "text", "text": "x" * size}], "isError": False}
        bodies[size] = (',"result":' + json.dumps(result, separators=(",", ":")) + "}\n").encode()
    return bodies[size]


def answer(request):
    """The response bytes (without newline) for one request, or None."""
    rid = request.get("id")
    method = request.get("method")
    if rid is None or method is None:
        return None
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode()
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bulk", "version": "1"},
        }
        return head + b',"result":' + json.dumps(result).encode() + b"}"
    if method == "tools/call":
        size = int(request["params"].get("arguments", {}).get("bytes", 100_000))
        return head + body(size)[:-1]
    return head + b',"error":{"code":-32601,"message":"no such method"}}'


class Http(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are two writes: with Nagle's algorithm the body
    # waits for the client's delayed ACK (40 ms) on every keep-alive call.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        response = answer(request)
        if response is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "bulk-session")
        self.send_header("Content-Length", str(len(response)))
        self.end_headers()
        self.wfile.write(response)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET


if "--http" in sys.argv:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Http)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()

for line in sys.stdin.buffer:
    if not line.strip():
        continue
    response = answer(json.loads(line))
    if response is not None:
        out.write(response + b"\n")
        out.flush()
