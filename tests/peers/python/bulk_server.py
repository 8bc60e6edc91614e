"""A bulk MCP server for elicit-bench's throughput figure (standard library only).

Answers `initialize`, and every `tools/call` of `bulk` with a result whose
text is `arguments.bytes` bytes long (default 100 000). The result body is
built once per size and only the id changes, so that the server spends
its time writing, not building JSON: the figure is about the pipe between
it and the host.
"""

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


def reply(rid, result):
    out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + result)
    out.flush()


for line in sys.stdin.buffer:
    if not line.strip():
        continue
    request = json.loads(line)
    rid = request.get("id")
    method = request.get("method")
    if rid is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bulk", "version": "1"},
        }
        reply(rid, b',"result":' + json.dumps(result).encode() + b"}\n")
    elif method == "tools/call":
        size = int(request["params"].get("arguments", {}).get("bytes", 100_000))
        reply(rid, body(size))
    else:
        reply(rid, b',"error":{"code":-32601,"message":"no such method"}}\n')
