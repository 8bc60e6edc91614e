"""A real MCP host on the Python `mcp` package, over Streamable HTTP, for
the tests of `elicit serve`.

    python3 http_host.py [--mode legacy|auto] [--token TOKEN] URL TOOL

Connects to URL without declaring elicitation (`mode` auto probes
`server/discover` and so speaks 2026-07-28 to a server that knows it;
legacy forces the `initialize` handshake), calls TOOL with no arguments,
and prints one JSON line per event: {"event": "ready"} and
{"event": "result", "text", "isError"}.
"""

import json
import sys

import anyio
import httpx2

from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def emit(event):
    print(json.dumps(event), flush=True)


async def main(argv):
    mode, token = "auto", None
    while argv and argv[0].startswith("--"):
        if argv[0] == "--mode":
            mode = argv[1]
        elif argv[0] == "--token":
            token = argv[1]
        argv = argv[2:]
    url, tool = argv
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:
            emit({"event": "ready"})
            result = await client.call_tool(tool, {})
            text = "\n".join(c.text for c in result.content if getattr(c, "text", None))
            emit({"event": "result", "text": text, "isError": bool(result.is_error)})


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
