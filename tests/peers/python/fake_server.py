"""A scripted, misbehaving MCP server (standard library only).

It exercises the proxy where no real SDK misbehaves on purpose: malformed
lines, an out-of-subset schema, its own cancellation, dying mid-form,
oversized lines, ignoring EOF and TERM (`--stubborn`), and a 2026-07-28
round of two forms (`two_forms`). Every response it
receives is echoed to the host as a `test/got` notification, so that a test
sees what the proxy answered the server.
"""

import json
import signal
import sys
import time

STUBBORN = "--stubborn" in sys.argv
# Answers `initialize`, which a host over HTTP (`elicit serve`) waits for;
# without it the proxy learns what the host declared from the request.
INITIALIZE = "--initialize" in sys.argv
if STUBBORN:
    # Ignores TERM from the start, as a server stuck in a system call may:
    # only KILL ends it (the proxy sends TERM at once when it is signalled).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


GOOD_FORM = {
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
BAD_FORM = {
    "message": "Nested!",
    "requestedSchema": {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}},
    },
}


# Calls of `ask_and_wait` waiting for their form, by the form's id.
WAITING = {}


def on_call(request):
    name = request["params"]["name"]
    rid = request["id"]
    if name == "malformed":
        raw("this is not json")
        raw('{"jsonrpc":"2.0","id":"srv-bad","bogus":true}')
        raw('{"jsonrpc":"2.0","id":"srv-broken","method":')
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "bad_form":
        send({"jsonrpc": "2.0", "id": "e-bad", "method": "elicitation/create", "params": BAD_FORM})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "form":
        # The form given in the arguments, as the server's own request.
        params = request["params"]["arguments"]["params"]
        send({"jsonrpc": "2.0", "id": "e-" + str(rid), "method": "elicitation/create", "params": params})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "ask_and_wait":
        # Answers the call only once the form is answered, as a real tool
        # does; the host's cancellation of the call is ignored, as a
        # server may, so that only the proxy can withdraw the form.
        WAITING["e-" + str(rid)] = rid
        send({"jsonrpc": "2.0", "id": "e-" + str(rid), "method": "elicitation/create", "params": GOOD_FORM})
    elif name == "send":
        # Sends the message given in the arguments as the server's own (a
        # task-augmented elicitation, tasks/get, tasks/cancel…); the
        # answer comes back as `test/got`.
        send(request["params"]["arguments"]["message"])
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "ask":
        send({"jsonrpc": "2.0", "id": "e-" + str(rid), "method": "elicitation/create", "params": GOOD_FORM})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "cancel":
        target = request["params"]["arguments"]["id"]
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": target}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "huge":
        raw('{"jsonrpc":"2.0","method":"test/huge","params":{"pad":"' + "x" * 5000 + '"}}')
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "ask_url":
        params = {"mode": "url", "message": "Sign in", "url": "https://example.com/login", "elicitationId": "u-1"}
        send({"jsonrpc": "2.0", "id": "e-" + str(rid), "method": "elicitation/create", "params": params})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "two_forms":
        # 2026-07-28: one round of two forms, then a result naming the
        # answers it got.
        responses = request["params"].get("inputResponses")
        if responses is None:
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "resultType": "input_required",
                "inputRequests": {
                    "first": {"method": "elicitation/create", "params": GOOD_FORM},
                    "second": {"method": "elicitation/create", "params": dict(GOOD_FORM, message="Your other name?")},
                },
                "requestState": "round-1",
            }})
        else:
            text = json.dumps(responses, sort_keys=True)
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    elif name == "die":
        sys.exit(3)


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "method" not in message:
        send({"jsonrpc": "2.0", "method": "test/got", "params": {"line": message}})
        call = WAITING.pop(message.get("id"), None)
        if call is not None:
            text = json.dumps(message.get("result"), sort_keys=True)
            send({"jsonrpc": "2.0", "id": call, "result": {"content": [{"type": "text", "text": text}]}})
    elif message.get("method") == "initialize" and INITIALIZE:
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}}})
    elif message.get("method") == "ping" and "id" in message:
        send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
    elif message.get("method") == "tools/call":
        on_call(message)

while STUBBORN:
    time.sleep(3600)
