"""A pydantic-ai agent as an MCP host, for tests/tests/agents_pydantic.rs:

    python3 pydantic_host.py ENTRY_JSON TOOL

ENTRY_JSON is an mcpServers entry (`{"command", "args"}` or `{"type":
"http", "url"}`), given to `MCPToolset` as a one-server MCP config, the
way its documentation configures a server. The model is pydantic-ai's own
`FunctionModel`: its first turn calls TOOL (none when TOOL is `none`), its
next turn prints the tool's return as it got it, as a JSON line
`{"tool_result": TEXT}`, and answers with text. Nothing leaves the machine.
SIGINT ends the run the way Python does (KeyboardInterrupt), which closes
the toolset and with it the server's stdio.
"""

import asyncio
import json
import sys

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def main():
    entry = json.loads(sys.argv[1])
    tool = sys.argv[2] if len(sys.argv) > 2 else "none"

    def model(messages, info: AgentInfo):
        for message in messages:
            for part in getattr(message, "parts", []):
                if isinstance(part, ToolReturnPart):
                    content = part.content
                    text = content if isinstance(content, str) else json.dumps(content, default=str)
                    print(json.dumps({"tool_result": text}), flush=True)
                    return ModelResponse(parts=[TextPart("done")])
        names = [t.name for t in info.function_tools]
        print(json.dumps({"tools": names}), flush=True)
        match = next((n for n in names if n == tool or n.endswith("_" + tool)), None)
        if tool == "none" or match is None:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(tool_name=match, args={})])

    toolset = MCPToolset({"mcpServers": {"everything": entry}})
    agent = Agent(FunctionModel(model), toolsets=[toolset])

    async def run():
        async with agent:
            result = await agent.run("Call the MCP tool.")
            print(json.dumps({"output": str(result.output)}), flush=True)

    asyncio.run(run())


if __name__ == "__main__":
    main()
