"""One raw HTTP request, for the tests of `elicit serve`: headers exactly
as given (the Host header too, which HTTP libraries otherwise set).

    python3 http_probe.py METHOD URL [NAME:VALUE]... [--body JSON]

Prints {"status", "headers" (lowercase names), "body"} as one JSON line.
"""

import http.client
import json
import sys
import urllib.parse


def main(argv):
    method, url, rest = argv[0], argv[1], argv[2:]
    body = None
    if "--body" in rest:
        at = rest.index("--body")
        body = rest[at + 1].encode()
        rest = rest[:at] + rest[at + 2 :]
    headers = [item.split(":", 1) for item in rest]
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    names = {name.lower() for name, _ in headers}
    connection.putrequest(method, parsed.path or "/", skip_host="host" in names, skip_accept_encoding=True)
    for name, value in headers:
        connection.putheader(name, value.strip())
    if body is not None:
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    # An SSE answer stays open: its head is enough here.
    content_type = response.getheader("content-type", "")
    text = "" if content_type.startswith("text/event-stream") else response.read().decode()
    print(json.dumps({
        "status": response.status,
        "headers": {k.lower(): v for k, v in response.getheaders()},
        "body": text,
    }), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
