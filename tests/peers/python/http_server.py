"""The tools of elicit_server.py (book, two_step, legacy_ask) over Streamable
HTTP, in both protocol eras at once, plus a URL-mode tool (`sign_in`).

    python3 http_server.py [PORT] [--resumable]   (PORT 0, the default: any free one)

With `--resumable` it keeps every event it sends (in memory) and gives each
an id and a 100 ms `retry`, so that a client whose stream dropped resumes
it with `Last-Event-ID` (the 2025 eras' resumability).

Once it accepts connections it prints one line to stdout, flushed:

    listening on http://127.0.0.1:PORT/mcp

What the pinned `mcp` 2.3.0 does (read from site/mcp, not guessed):

* `MCPServer.streamable_http_app(streamable_http_path="/mcp",
  json_response=False, stateless_http=False, event_store=None,
  retry_interval=None, transport_security=None, host="127.0.0.1", …)`
  returns a Starlette app; `run_streamable_http_async(host, port, …)` is the
  same app under uvicorn, but it cannot report the port it got when given 0,
  hence the pre-bound socket below.
* One endpoint serves both eras. `StreamableHTTPSessionManager` routes by the
  `MCP-Protocol-Version` header alone (server/streamable_http_manager.py):
  absent or one of the handshake versions (2025-06-18, 2025-11-25, …) takes
  the 2025 path, stateful by default (`initialize`, `Mcp-Session-Id`, a GET
  stream, `elicitation/create` sent on the POST's SSE stream);
  any other value goes to server/_streamable_http_modern.py, the 2026-07-28
  path: stateless, no `initialize`, `_meta` carries version and capabilities,
  `Mcp-Method`/`Mcp-Name` must match the body (else HTTP 400, -32020), and
  resolvers answer `resultType: "input_required"` with a sealed
  `requestState`. `stateless_http=True` only changes the 2025 path (no
  sessions, no server-to-client requests: `ctx.elicit` then fails with
  NoBackChannelError), so it stays off here. `json_response=True` makes both
  paths answer plain JSON instead of SSE; off, the 2025 path can carry
  `elicitation/create` before the response.
* With `host="127.0.0.1"` and no `transport_security`, DNS-rebinding
  protection is on: Host must be 127.0.0.1:*, localhost:* or [::1]:*, and an
  Origin, if sent, http://127.0.0.1:*, http://localhost:* or http://[::1]:*.
* URL mode: `ctx.elicit_url(message, url, elicitation_id)` sends a standalone
  `elicitation/create` with `mode: "url"` (2025 eras only), and raising
  `mcp.shared.exceptions.UrlElicitationRequiredError([...])` answers the call
  with the -32042 error whose data lists the URLs. There is no URL-mode
  resolver (`Elicit` is form mode only), so no URL `input_required` round in
  2026-07-28 from this SDK.
"""

import logging
import socket
import sys

import anyio
import uvicorn
from mcp_types import ElicitRequestURLParams

from mcp.server.mcpserver import Context
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.shared.exceptions import UrlElicitationRequiredError

# The stdio server's tools, registered on its MCPServer; this script's folder
# is on sys.path, as Python puts the running script's folder there.
from elicit_server import server

SIGN_IN_URL = "https://example.com/sign-in"


@server.tool()
async def sign_in(ctx: Context, error: bool = False) -> str:
    """Sign in through a URL: asked as a URL-mode elicitation, or with
    `error` true, refused with the -32042 URL-elicitation-required error."""
    if error:
        raise UrlElicitationRequiredError(
            [
                ElicitRequestURLParams(
                    mode="url",
                    message="Sign in first",
                    url=SIGN_IN_URL,
                    elicitation_id="sign-in-required",
                )
            ]
        )
    result = await ctx.elicit_url("Sign in to continue", SIGN_IN_URL, "sign-in")
    return f"sign in: {result.action}"


class MemoryEventStore(EventStore):
    """Every event of every stream, in order, for replay after a drop."""

    def __init__(self):
        self.events = []  # (event id, stream id, message or None)

    async def store_event(self, stream_id, message):
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        index = next((i for i, e in enumerate(self.events) if e[0] == last_event_id), None)
        if index is None:
            return None
        stream_id = self.events[index][1]
        for event_id, stream, message in self.events[index + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


async def main(port: int, resumable: bool) -> None:
    # The SDK logs every session at INFO; a test's output needs none of it.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    if resumable:
        app = server.streamable_http_app(host="127.0.0.1", event_store=MemoryEventStore(), retry_interval=100)
    else:
        app = server.streamable_http_app(host="127.0.0.1")
    await serve_app(app, port)


async def serve_app(app, port: int) -> None:
    """Serves the ASGI `app` on 127.0.0.1:`port` (0: any) and prints
    `listening on URL` once it accepts connections. uvicorn cannot report
    the port it got when given 0, hence the socket bound first."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    port = listener.getsockname()[1]
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: http.serve(sockets=[listener]))
        while not http.started:
            if tasks.cancel_scope.cancel_called:
                return
            await anyio.sleep(0.01)
        print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)

if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    anyio.run(main, int(numbers[0]) if numbers else 0, "--resumable" in sys.argv)
