"""The conformance suite's client under test: a host on the Python `mcp`
package that runs `elicit proxy -- python3 fastmcp_bridge.py URL` and calls
every tool of the scenario's server, while a scripted answerer accepts each
form elicitd queues with `elicit answer ID --accept '{}'` (no values: the
broker must fill the defaults).

    ELICIT=…/elicit BUS=ADDRESS python3 conformance_host.py URL

The suite appends the server's URL to the command it is given.
"""

import json
import os
import subprocess
import sys
import threading

import anyio

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ELICIT = os.environ["ELICIT"]
BUS = os.environ["BUS"]
HERE = os.path.dirname(os.path.abspath(__file__))


def answer_everything(watch):
    """Answers each form as `elicit watch` reports it queued."""
    for line in watch.stdout:
        event = json.loads(line)
        if event.get("event") == "form" and event.get("state") == "queued":
            done = subprocess.run(
                [ELICIT, "--bus", BUS, "answer", str(event["form"]), "--accept", "{}"],
                capture_output=True,
                text=True,
            )
            print(f"conformance_host: answered form {event['form']}: exit {done.returncode} {done.stderr.strip()}", file=sys.stderr)


async def main(url):
    watch = subprocess.Popen([ELICIT, "--bus", BUS, "watch", "--json"], stdout=subprocess.PIPE, text=True)
    # The first line says the subscription is live: no form can be missed.
    json.loads(watch.stdout.readline())
    threading.Thread(target=answer_everything, args=(watch,), daemon=True).start()
    bridge = [sys.executable, os.path.join(HERE, "fastmcp_bridge.py"), url]
    server = StdioServerParameters(
        command=ELICIT,
        args=["--bus", BUS, "proxy", "--", "env", f"PYTHONPATH={os.path.join(HERE, 'site')}", *bridge],
    )
    try:
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool in (await session.list_tools()).tools:
                    result = await session.call_tool(tool.name, {})
                    texts = [getattr(c, "text", "") for c in result.content]
                    print(f"conformance_host: {tool.name}: {texts}", file=sys.stderr)
    finally:
        watch.kill()


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])
