"""A stdio MCP server that forwards everything to the Streamable HTTP server
at argv[1], elicitations included: fastmcp's `create_proxy(url)`, the
stdio-to-HTTP bridge the conformance suite's client scenarios allow."""

import sys

from fastmcp.server import create_proxy

create_proxy(sys.argv[1]).run(transport="stdio", show_banner=False)
