#!/bin/sh
# Installs the real MCP peers of the proxy tests (tests/tests/proxy.rs),
# pinned, inside this folder only: nothing goes into the system.
#
#   node/   @modelcontextprotocol/server-everything (package-lock.json pins it)
#   python/ the `mcp` package from PyPI, into python/site (PYTHONPATH)
#
# Needs node 20 with npm, and python3 (3.10+) with pip. Run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error)

# --target keeps the packages out of the system's site-packages; the
# variable lets pip do that on Debian's externally managed Python (older
# pips ignore it).
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
    --no-warn-conflicts --upgrade --target "$here/python/site" -r "$here/python/requirements.txt"

echo "MCP test peers installed in $here"
