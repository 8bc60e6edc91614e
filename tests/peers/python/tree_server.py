"""A server with a process tree, as launchers make one (standard library only).

`sh -c 'python3 tree_server.py; :'` stands for `sh -c` → `npm exec` →
`node`: the server forks a helper of its own, answers `ping`, and, as
`npm exec` does, keeps running after its input closes; TERM ends it (the
default action). With `--escape` the helper calls `setsid` first, as a
daemon does, leaving the server's process group and session, and keeps
the server's output open. With `--ignore-term` the server and its helper
ignore TERM (a server busy flushing, say): only KILL ends them. Each process prints nothing but its answers.
"""

import json
import os
import signal
import sys
import time

ESCAPE = "--escape" in sys.argv
if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def helper():
    if ESCAPE:
        os.setsid()
    while True:
        time.sleep(3600)


if os.fork() == 0:
    helper()

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if message.get("method") == "ping" and "id" in message:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}) + "\n")
        sys.stdout.flush()

# Input closed: linger until a signal ends us.
while True:
    time.sleep(3600)
