"""Many large POST bodies at once, for the body budget test of
`elicit serve`.

    python3 big_bodies.py URL COUNT MIB [--chunked]

Sends COUNT concurrent 2026-07-28 `tools/list` requests to URL, each a
body of MIB MiB (the padding in `_meta`), with Content-Length or, with
--chunked, in 1 MiB chunks without one. Prints {"statuses": [...]} as one
JSON line, one status per request (0: the connection failed).
"""

import http.client
import json
import sys
import threading
import urllib.parse


def body(mib):
    pad = "x" * (mib * 1024 * 1024 - 200)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "pad": pad}}}
    return json.dumps(message).encode()


def send(url, data, chunked, statuses, index):
    parsed = urllib.parse.urlsplit(url)
    try:
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        }
        if chunked:
            chunks = (data[i:i + 1024 * 1024] for i in range(0, len(data), 1024 * 1024))
            connection.request("POST", parsed.path, body=chunks, headers=headers, encode_chunked=True)
        else:
            connection.request("POST", parsed.path, body=data, headers=headers)
        response = connection.getresponse()
        response.read()
        statuses[index] = response.status
    except OSError:
        statuses[index] = 0


def main(argv):
    url, count, mib = argv[0], int(argv[1]), int(argv[2])
    chunked = "--chunked" in argv[3:]
    data = body(mib)
    statuses = [None] * count
    threads = [threading.Thread(target=send, args=(url, data, chunked, statuses, i)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"statuses": statuses}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
