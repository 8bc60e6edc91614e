"""A real MCP host on the Python `mcp` package, for the proxy's host tests.

    python3 host.py [--cwd DIR] [--env NAME=VALUE]... TOOL -- SERVER COMMAND...

Starts SERVER COMMAND with `stdio_client` and the SDK's *default*
environment filtering (only HOME, LOGNAME, PATH, SHELL, TERM, USER pass,
plus any --env given), as hosts built on it do; initialises without
declaring elicitation; calls TOOL with no arguments; and prints one JSON
line per event: {"event": "ready"}, {"event": "log", "level", "data"} for
each `notifications/message`, and {"event": "result", "text", "isError"}.
"""

import json
import sys

import anyio

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client


def emit(event):
    print(json.dumps(event), flush=True)


async def on_log(params):
    emit({"event": "log", "level": params.level, "data": params.data})


async def main(argv):
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    cwd, env, tool = None, get_default_environment(), None
    i = 0
    while i < len(options):
        if options[i] == "--cwd":
            cwd = options[i + 1]
            i += 2
        elif options[i] == "--env":
            name, _, value = options[i + 1].partition("=")
            env[name] = value
            i += 2
        else:
            tool = options[i]
            i += 1
    server = StdioServerParameters(command=command[0], args=command[1:], cwd=cwd, env=env)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            await session.initialize()
            emit({"event": "ready"})
            result = await session.call_tool(tool, {})
            text = "\n".join(c.text for c in result.content if getattr(c, "text", None))
            emit({"event": "result", "text": text, "isError": bool(result.is_error)})


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
