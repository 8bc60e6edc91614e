#!/bin/sh
# Installs the real MCP peers of the proxy tests (tests/tests/proxy.rs and
# proxy_hosts.rs),
# pinned, inside this folder only: nothing goes into the system.
#
#   node/   @modelcontextprotocol/server-everything and the conformance suite
#           @modelcontextprotocol/conformance (0.1.10: later ones need node 22)
#           (package-lock.json pins them)
#   python/ the `mcp` package and fastmcp (its stdio-to-HTTP bridge for the
#           conformance scenario) from PyPI, into python/site (PYTHONPATH)
#   OpenSSH (Debian packages, as root) for the ssh -R test
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

# OpenSSH for the remote-agent test (an sshd on 127.0.0.1, started by the
# test itself with its own config and keys). Only as root with apt.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! [ -x /usr/sbin/sshd ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        openssh-server openssh-client >/dev/null
fi

echo "MCP test peers installed in $here"
