"""An MCP server over Streamable HTTP (plain JSON replies, no session)
that answers only requests bearing one access token, for the tokens test:
any other request gets 401 with a `WWW-Authenticate: Bearer` challenge, as
a protected resource does. Python's standard library alone.

    python3 bearer_server.py TOKEN [REFRESH NEW_TOKEN NEW_REFRESH]

With the refresh arguments it is its own token endpoint too: `POST /token`
with the form `grant_type=refresh_token&refresh_token=REFRESH&resource=`
its URL answers NEW_TOKEN (expiring in an hour) and NEW_REFRESH, once;
from then on /mcp takes NEW_TOKEN alone.

Prints `listening on http://127.0.0.1:PORT/mcp`, then one line per request:
`METHOD PATH TOKEN ok` or `METHOD PATH TOKEN 401`, TOKEN being `old`
(TOKEN), `new` (NEW_TOKEN), `none` or `wrong`; and `POST /token refresh ok`
or `POST /token 400 REASON`. Never a token itself.
"""

import json
import sys
from urllib.parse import parse_qs

from plain_http import SAYING, JsonHandler, say, serve

TOKEN = sys.argv[1]
REFRESH, NEW_TOKEN, NEW_REFRESH = (sys.argv[2:5] + [None, None, None])[:3]

# The token taken changes under the lock that keeps lines whole.
refreshed = False


class Handler(JsonHandler):
    def resource(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def authorized(self):
        given = self.headers.get("Authorization")
        if given is None:
            label = "none"
        elif given == f"Bearer {TOKEN}":
            label = "old"
        elif NEW_TOKEN is not None and given == f"Bearer {NEW_TOKEN}":
            label = "new"
        else:
            label = "wrong"
        with SAYING:
            ok = label == ("new" if refreshed else "old")
            sys.stdout.write(f"{self.command} {self.path} {label} {'ok' if ok else '401'}\n")
            sys.stdout.flush()
        if ok:
            return True
        port = self.server.server_address[1]
        metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        self.reply(401, {"error": "invalid_token"}, [("WWW-Authenticate", f'Bearer resource_metadata="{metadata}"')])
        return False

    def token(self, body):
        global refreshed
        form = {name: values[0] for name, values in parse_qs(body.decode()).items()}
        with SAYING:
            if REFRESH is None:
                reason = "no token endpoint"
            elif form.get("grant_type") != "refresh_token":
                reason = "grant_type " + form.get("grant_type", "none")
            elif refreshed or form.get("refresh_token") != REFRESH:
                reason = "refresh_token wrong"
            elif form.get("resource") != self.resource():
                reason = "resource " + form.get("resource", "none")
            else:
                reason = None
                refreshed = True
            sys.stdout.write(f"POST /token {'refresh ok' if reason is None else '400 ' + reason}\n")
            sys.stdout.flush()
        if reason is not None:
            self.reply(400, {"error": "invalid_grant"})
            return
        self.reply(
            200,
            {"access_token": NEW_TOKEN, "token_type": "Bearer", "expires_in": 3600, "refresh_token": NEW_REFRESH},
            [("Cache-Control", "no-store")],
        )

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
        if self.path == "/token":
            self.token(body)
            return
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


serve(Handler, lambda base: say(f"listening on {base}/mcp"))
