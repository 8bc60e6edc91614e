"""A benchmark MCP host on the Python `mcp` package (used by elicit-bench).

    python3 bench_host.py N [--callback] -- SERVER COMMAND...

Starts SERVER COMMAND over stdio, initialises, then calls the `book` tool
of elicit_server.py N times in a row, each call timed here, and prints one
JSON line per call: {"seconds": …}. Timing inside the host keeps Python's
own cost identical in the two setups elicit-bench compares:

* `--callback`: the host declares elicitation and answers the server's
  `elicitation/create` in-process, at once (the floor);
* without it: the host declares nothing and SERVER COMMAND is
  `elicit proxy -- …`, so the broker and a scripted front-end answer.

A few untimed calls first warm up imports, pydantic and the caches.
"""

import json
import os
import sys
import time

import anyio
import mcp_types as types

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

WARM_UP = 5
ANSWER = {"seat": "12A", "count": 2}


async def answer_at_once(context, params):
    """The in-process human: accepts every form with a valid seat."""
    return types.ElicitResult(action="accept", content=ANSWER)


async def main(count, callback, command):
    server = StdioServerParameters(
        command=command[0],
        args=command[1:],
        # The server (or the proxy and its server) needs the same packages
        # and the bus address, and ELICITD_LOG traces the proxy; the
        # default environment drops all three.
        env={k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "DBUS_SESSION_BUS_ADDRESS", "ELICITD_LOG")},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=answer_at_once if callback else None
        ) as session:
            await session.initialize()
            for i in range(WARM_UP + count):
                started = time.perf_counter()
                result = await session.call_tool("book", {})
                elapsed = time.perf_counter() - started
                text = result.content[0].text if result.content else ""
                if "booked 2 x 12A" not in text:
                    raise SystemExit(f"bench_host: unexpected result: {text!r}")
                if i >= WARM_UP:
                    print(json.dumps({"seconds": elapsed}), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--" not in args or not args or not args[0].isdigit():
        raise SystemExit(__doc__)
    split = args.index("--")
    anyio.run(main, int(args[0]), "--callback" in args[:split], args[split + 1 :])
