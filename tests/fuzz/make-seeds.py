#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target into DIR/<target>/ from the
vectors (proto/vectors) and
packaging/examples. Seeds are merged into the committed corpus with
`cargo fuzz cmin`, so only what adds coverage is kept."""
import json, pathlib, sys

root = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path(sys.argv[1])
vectors = root / "proto" / "vectors"
requests = json.loads((vectors / "requests.json").read_text())
contents = json.loads((vectors / "contents.json").read_text())
examples = [json.loads(p.read_text()) for p in sorted((root / "packaging" / "examples").glob("*.json"))]

def write(target, name, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())

params = {r["name"]: r["params"] for r in requests}
for r in requests:
    write("schema_check", "vector-" + r["name"], json.dumps(r["params"]))
for i, e in enumerate(examples):
    write("schema_check", f"example-{i}", json.dumps(e, indent=1))
for c in contents:
    if c["request"] in params:
        answer = {"action": c["action"], "content": c["content"]}
        write("content_validation", "vector-" + c["name"], json.dumps({"params": params[c["request"]], "answer": answer}))
for i, e in enumerate(examples):
    write("content_validation", f"example-decline-{i}", json.dumps({"params": e, "answer": {"action": "decline"}}))

# proxy_lines: one byte of cap (0x40 -> a 65-byte cap), then a transcript.
def rpc(**m):
    return json.dumps({"jsonrpc": "2.0", **m})
lines = [
    rpc(id=0, method="initialize", params={"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "h", "version": "1"}}),
    rpc(id=0, result={"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
    rpc(method="notifications/initialized"),
    rpc(id="t1", method="tools/call", params={"name": "x", "_meta": {"progressToken": 1, "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}}),
    rpc(id=5, method="elicitation/create", params=next(iter(params.values()), {"message": "m", "requestedSchema": {"type": "object"}})),
    rpc(id=5, result={"action": "accept", "content": {}}),
    rpc(id=7, error={"code": -32042, "message": "url required"}),
    rpc(method="notifications/cancelled", params={"requestId": "t1"}),
    '{"jsonrpc":"2.0","id":9,"method":"x",,}',
    "[1,2]",
    "   \r",
]
write("proxy_lines", "transcript", b"\x40" + "\n".join(lines).encode() + b"\n")
write("proxy_lines", "crlf", b"\x10" + "\r\n".join(lines[:3]).encode())
write("proxy_lines", "long", b"\x02" + ("x" * 300 + "\n" + lines[2]).encode())
