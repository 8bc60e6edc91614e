// A host on the TypeScript SDK's Client (@modelcontextprotocol/sdk, pinned
// in package.json), for tests/tests/agents_sdk.rs:
//
//   node sdk_host.mjs ENTRY_JSON TOOL TIMEOUT_MS
//
// ENTRY_JSON is an mcpServers entry: {"command", "args"} over stdio (the
// SDK's default, filtered environment) or {"type": "http", "url"}. It calls
// TOOL (or only lists the tools when TOOL is "none") with a progress
// handler, so that the proxy's keep-alive has a token, and TIMEOUT_MS as
// the SDK's request timeout (0: the SDK's default), after which the SDK
// sends notifications/cancelled. It prints JSON lines: {"tool_result":
// TEXT}, {"error": MESSAGE}, and {"late_progress": {...}} for progress that
// arrives for a request it already gave up. SIGINT closes the client the
// SDK's way (stdin closed, then SIGTERM, then SIGKILL) before exiting.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [entryJson, tool, timeoutArg] = process.argv.slice(2);
const entry = JSON.parse(entryJson);
const timeout = Number(timeoutArg || 0);
const print = (value) => process.stdout.write(JSON.stringify(value) + "\n");

const transport = entry.type === "http"
  ? new StreamableHTTPClientTransport(new URL(entry.url))
  : new StdioClientTransport({ command: entry.command, args: entry.args ?? [] });
const client = new Client({ name: "sdk-host", version: "1.0.0" }, { capabilities: {} });
client.onerror = (error) => {
  const message = String(error?.message ?? error);
  if (message.includes("progress")) {
    print({ late_progress: { message } });
  }
};

process.on("SIGINT", async () => {
  await client.close().catch(() => {});
  process.exit(130);
});

await client.connect(transport);
await client.listTools();
if (tool !== "none") {
  const options = { onprogress: () => {}, resetTimeoutOnProgress: false };
  if (timeout > 0) {
    options.timeout = timeout;
  }
  try {
    const result = await client.callTool({ name: tool, arguments: {} }, undefined, options);
    const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    print({ tool_result: text });
  } catch (error) {
    print({ error: String(error?.message ?? error) });
    if (timeout > 0) {
      // Long enough to see one more keep-alive (every 10 s) if the proxy
      // still sent it for the cancelled call.
      await new Promise((resolve) => setTimeout(resolve, 13000));
    }
  }
}
await client.close();
