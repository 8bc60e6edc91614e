"""An MCP server behind an authorization server of its own, both on one
loopback port, which can lie the ways an OAuth mix-up needs (RFC 8414
§3.3, RFC 9207), for tests/tests/oauth_issuer.rs. Python's standard
library alone.

    python3 oauth_server.py [--claim-issuer URL] [--advertise-iss]
                            [--iss right|wrong|none]

* The protected resource metadata names the issuer BASE/as; the
  authorization server's metadata (at the RFC 8414 place for it) says its
  issuer is BASE/as, or `--claim-issuer`'s URL.
* `--advertise-iss` sets `authorization_response_iss_parameter_supported`.
* `--iss` decides the redirect's `iss`: BASE/as (right), another issuer
  (wrong), or none (the default).
* /mcp answers 401 with a Bearer challenge unless the request bears the
  token /as/token gave; then `initialize`, `tools/list` (one tool,
  `whoami`) and `tools/call` (the text "signed in").

Prints `listening on http://127.0.0.1:PORT/mcp`, then one line per request,
`METHOD PATH`, so that a test sees which endpoints the client reached.
"""

import argparse
import json
import sys
from urllib.parse import parse_qs, urlencode, urlparse

from plain_http import JsonHandler, say, serve

ARGS = argparse.ArgumentParser()
ARGS.add_argument("--claim-issuer")
ARGS.add_argument("--advertise-iss", action="store_true")
ARGS.add_argument("--iss", choices=["right", "wrong", "none"], default="none")
OPTIONS = ARGS.parse_args()

TOKEN = "access-token-of-oauth-server-py"
CODE = "code-of-oauth-server-py"
BASE = ""



class Handler(JsonHandler):
    def do_GET(self):
        url = urlparse(self.path)
        say(f"GET {url.path}")
        issuer = f"{BASE}/as"
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            self.reply(200, {"resource": f"{BASE}/mcp", "authorization_servers": [issuer]})
        elif url.path == "/.well-known/oauth-authorization-server/as":
            self.reply(200, {
                "issuer": OPTIONS.claim_issuer or issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "registration_endpoint": f"{issuer}/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": OPTIONS.advertise_iss,
            })
        elif url.path == "/as/authorize":
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            back = {"code": CODE, "state": query.get("state", "")}
            if OPTIONS.iss == "right":
                back["iss"] = issuer
            elif OPTIONS.iss == "wrong":
                back["iss"] = "https://attacker.example/as"
            self.send_response(302)
            self.send_header("Location", f"{query.get('redirect_uri', '')}?{urlencode(back)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self):
        url = urlparse(self.path)
        say(f"POST {url.path}")
        body = self.body()
        if url.path == "/as/register":
            sent = json.loads(body or b"{}")
            self.reply(201, {"client_id": "client-of-oauth-server-py",
                             "redirect_uris": sent.get("redirect_uris", []),
                             "token_endpoint_auth_method": "none"})
        elif url.path == "/as/token":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if form.get("code") != CODE:
                self.reply(400, {"error": "invalid_grant"})
                return
            self.reply(200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600})
        elif url.path == "/mcp":
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                challenge = f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
                self.reply(401, {"error": "unauthorized"}, [("WWW-Authenticate", challenge)])
                return
            self.mcp(json.loads(body or b"{}"))
        else:
            self.reply(404, {"error": "not_found"})

    def mcp(self, message):
        method = message.get("method")
        if "id" not in message:
            self.reply(202)
            return
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauth-server-py", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "signed in"}]}
        else:
            result = {}
        self.reply(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


def listening(base):
    global BASE
    BASE = base
    say(f"listening on {BASE}/mcp")


def main():
    serve(Handler, listening)


if __name__ == "__main__":
    main()
