"""The conformance suite's client under test: a host on the Python `mcp`
package that runs `elicit --bus BUS proxy --url URL` (the proxy is the
Streamable HTTP client the suite tests) and calls every tool of the
scenario's server, while a scripted answerer stands in for the human:

* a form elicitd queues is accepted with `elicit answer ID --accept '{}'`
  (no values: the broker must fill the defaults);
* a URL-mode form (the OAuth authorization URL the bridge asks for consent
  to) is accepted, then "opened": fetched with urllib, redirects followed,
  so that the suite's authorization server redirects to the bridge's
  loopback listener with the code, as a browser would. `elicit list --json`
  shows no URL (mode and message only), so unless it comes to, the host
  claims the form over D-Bus (jeepney) as a front-end does, which gives the
  request, and answers on that connection: a claim belongs to the
  connection that made it (`elicit answer` in another process is refused:
  "not presented to this connection with this token").

    ELICIT=…/elicit BUS=ADDRESS python3 conformance_host.py URL

The suite appends the server's URL to the command it is given (it splits the
command on spaces and runs it through a shell), and sets
MCP_CONFORMANCE_SCENARIO and, for some auth scenarios,
MCP_CONFORMANCE_CONTEXT (JSON: client_id, client_secret, …).

Environment:

* BRIDGE=fastmcp: `elicit proxy -- python3 fastmcp_bridge.py URL` instead of
  `--url` (the stdio proxy behind fastmcp's stdio-to-HTTP bridge).
* PROXY_FLAGS: a JSON list of more flags for `elicit proxy`.
* PROXY_STDERR: a file for the proxy's standard error (else this host's).
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.request

import anyio
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ELICIT = os.environ["ELICIT"]
BUS = os.environ["BUS"]
HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
CONTEXT = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")

# auth/basic-cimd's client id: the suite's authorization server checks the
# authorization request's client_id against this URL (a warning otherwise).
CIMD_URL = "https://conformance-test.local/client-metadata.json"

# What a scenario's tools need as arguments; `{}` for the rest.
ARGUMENTS = {"add_numbers": {"a": 1, "b": 2}}


def log(text):
    print(f"conformance_host: {text}", file=sys.stderr, flush=True)


def elicit(*args):
    return subprocess.run([ELICIT, "--bus", BUS, *args], capture_output=True, text=True)


BROKER = DBusAddress("/dev/elicitd/Broker", bus_name="dev.elicitd.Broker", interface="dev.elicitd.Broker1")


def pending_form(form):
    """The form's entry in `elicit list --json`, or None."""
    listed = elicit("list", "--json")
    for entry in json.loads(listed.stdout or "[]"):
        if str(entry.get("id")) == str(form):
            return entry
    return None


def open_url(url):
    """What a browser does with the consented URL: GET it, redirects and all."""
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            log(f"opened {url}: HTTP {response.status} at {response.geturl()}")
    except Exception as error:  # noqa: BLE001 - reported, the suite judges
        log(f"opening {url} failed: {error}")


def answer_url_form(form, entry):
    """Accepts a URL-mode form, then opens its URL."""
    url = entry.get("url")
    if url:
        done = elicit("answer", str(form), "--accept", "{}")
        log(f"accepted URL form {form}: exit {done.returncode} {done.stderr.strip()}")
    else:
        # `elicit list --json` does not show the URL: claim the form as a
        # front-end does, which gives its request, and answer with the token
        # on the same connection (a claim is the connection's).
        try:
            with open_dbus_connection(bus=BUS) as bus:
                reply = bus.send_and_get_reply(new_method_call(BROKER, "Claim", "s", (str(form),)))
                token, request, _info = reply.body
                url = json.loads(request).get("url")
                reply = bus.send_and_get_reply(
                    new_method_call(BROKER, "Answer", "ssss", (str(form), token, "accept", "{}"))
                )
                log(f"accepted URL form {form} by D-Bus: {reply.header.message_type.name} {reply.body}")
        except Exception as error:  # noqa: BLE001 - reported, the suite judges
            log(f"claiming URL form {form} failed: {error}")
            return
    if url:
        open_url(url)


def answer_everything(watch):
    """Answers each form as `elicit watch` reports it queued."""
    for line in watch.stdout:
        event = json.loads(line)
        if event.get("event") != "form" or event.get("state") != "queued":
            continue
        form = event["form"]
        entry = pending_form(form) or {}
        if entry.get("mode") == "url":
            threading.Thread(target=answer_url_form, args=(form, entry), daemon=True).start()
            continue
        done = elicit("answer", str(form), "--accept", "{}")
        log(f"answered form {form}: exit {done.returncode} {done.stderr.strip()}")


def proxy_args(url):
    """`elicit proxy`'s arguments and extra environment for this scenario."""
    env = {}
    if os.environ.get("BRIDGE") == "fastmcp":
        bridge = [sys.executable, os.path.join(HERE, "fastmcp_bridge.py"), url]
        args = ["proxy", "--", "env", f"PYTHONPATH={os.path.join(HERE, 'site')}", *bridge]
    else:
        args = ["proxy", "--url", url]
        # The OAuth client's settings, as a user would give them. The flag
        # names are the bridge's (issue 17): adjust here if they change.
        if SCENARIO == "auth/basic-cimd":
            args += ["--client-metadata-url", CIMD_URL]
        if "client_id" in CONTEXT:
            args += ["--client-id", CONTEXT["client_id"]]
        if "client_secret" in CONTEXT:
            # A secret goes in a file (0600), never on the command line.
            fd, path = tempfile.mkstemp(prefix="elicit-conformance-secret-")
            with os.fdopen(fd, "w") as secret:
                secret.write(CONTEXT["client_secret"])
            args += ["--client-secret-file", path]
        # Tokens are kept as a user's would be, in a state directory of
        # this run's own rather than the real home's.
        env["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="elicit-conformance-state-")
    args += json.loads(os.environ.get("PROXY_FLAGS") or "[]")
    return ["--bus", BUS, *args], env


async def main(url):
    watch = subprocess.Popen([ELICIT, "--bus", BUS, "watch", "--json"], stdout=subprocess.PIPE, text=True)
    # The first line says the subscription is live: no form can be missed.
    json.loads(watch.stdout.readline())
    threading.Thread(target=answer_everything, args=(watch,), daemon=True).start()
    args, env = proxy_args(url)
    log(f"elicit {' '.join(args)}")
    server = StdioServerParameters(command=ELICIT, args=args, env={**os.environ, **env})
    errlog = open(os.environ["PROXY_STDERR"], "a") if os.environ.get("PROXY_STDERR") else sys.stderr
    try:
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool in (await session.list_tools()).tools:
                    result = await session.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))
                    texts = [getattr(c, "text", "") for c in result.content]
                    log(f"{tool.name}: {texts}")
    finally:
        watch.kill()
        if errlog is not sys.stderr:
            errlog.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])
