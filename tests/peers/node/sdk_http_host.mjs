// A real MCP host on the TypeScript SDK (@modelcontextprotocol/sdk, pinned
// in package.json), over Streamable HTTP, for the tests of `elicit serve`.
//
//     node sdk_http_host.mjs URL [TOOL]
//
// Connects to URL declaring no elicitation, calls TOOL with no arguments
// (without TOOL: lists the tools, their names the result's text), prints one JSON line per event ({"event": "ready"}, {"event": "result",
// "text", "isError"}), then closes the way the SDK's users do: `close()`,
// which drops the streams and sends no DELETE (only
// `terminateSession()` would). The session is left for the server to end.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function emit(event) {
  process.stdout.write(JSON.stringify(event) + "\n");
}

const [url, tool] = process.argv.slice(2);
if (!url) {
  process.stderr.write("usage: node sdk_http_host.mjs URL [TOOL]\n");
  process.exit(2);
}

const client = new Client({ name: "sdk-host", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
emit({ event: "ready", session: transport.sessionId ?? null });
if (tool) {
  const result = await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 120_000 });
  const text = (result.content ?? [])
    .filter((c) => typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
  emit({ event: "result", text, isError: Boolean(result.isError) });
} else {
  const { tools } = await client.listTools();
  emit({ event: "result", text: tools.map((t) => t.name).join(","), isError: false });
}
await client.close();
emit({ event: "closed" });
