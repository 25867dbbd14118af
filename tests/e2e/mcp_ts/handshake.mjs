// Relay's MCP server through the TypeScript SDK's client, the one Claude Code, Cursor and
// Gemini CLI are built on: the handshake, the tool list, a call, a refusal, and (when the
// server offers it) the inbox subscription. Prints what it saw as one JSON line.
//
// Environment: MCP_DOOR (stdio | http), RELAY_URL, RELAY_TOKEN, RELAY_AGENT_ID,
// RELAY_OPERATOR_TOKEN (to send the agent mail), MCP_COMMAND (stdio: a JSON array).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const env = process.env;
const agent = env.RELAY_AGENT_ID;

function transport() {
  if (env.MCP_DOOR === "stdio") {
    const [command, ...args] = JSON.parse(env.MCP_COMMAND);
    return new StdioClientTransport({ command, args, env, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(`${env.RELAY_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${env.RELAY_TOKEN}` } },
  });
}

function within(ms, promise) {
  const timer = new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), ms));
  return Promise.race([promise, timer]);
}

const client = new Client({ name: "relay-handshake", version: "1.0.0" });
await client.connect(transport());
const capabilities = client.getServerCapabilities();
const tools = (await client.listTools()).tools.map((tool) => tool.name);
// The SDK checks each structured result against the tool's output schema.
const whoami = await client.callTool({ name: "whoami", arguments: {} });
const refused = await client.callTool({ name: "complete_task", arguments: { task_id: 999999 } });

let update = null;
if (capabilities.resources?.subscribe) {
  const heard = new Promise((resolve) =>
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
  );
  await client.subscribeResource({ uri: "relay://inbox" });
  const sent = await fetch(`${env.RELAY_URL}/v1/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${env.RELAY_OPERATOR_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ to: agent, text: "hello from typescript" }),
  });
  if (sent.status !== 201) throw new Error(`send answered ${sent.status}`);
  update = await within(20000, heard);
}
const inbox = await client.readResource({ uri: "relay://inbox" });
await client.close();

console.log(
  JSON.stringify({
    server: client.getServerVersion()?.name,
    subscribe: Boolean(capabilities.resources?.subscribe),
    tools,
    agent: whoami.structuredContent?.agent_id,
    whoami_error: Boolean(whoami.isError),
    refused: refused.isError ? refused.structuredContent?.code : null,
    update,
    inbox: JSON.parse(inbox.contents[0].text).messages.map((m) => m.text),
  }),
);
