// The official TypeScript SDK's client against an agent's MCP endpoint
// (gateway_ts_test.go runs it with the pinned Node 22).
//
// Usage: node tsclient.mjs <node_modules dir> <endpoint URL>
//
// It prints one JSON line per step on stdout and reads commands, one per
// line, on stdin:
//   basics:    lists, calls a tool of each upstream server, gets a prompt,
//              reads a resource, calls "ask" (the answer to the upstream
//              elicitation is {name: "Grace"})
//   slow:      starts tool_alpha_slow; "cancel" on stdin aborts it, then
//              {step: "cancelled"}
//   changed:   after each tools/list_changed, the tools listed, until stdin
//              says "quit"
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [dir, endpoint] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(dir, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema, ToolListChangedNotificationSchema } = await sdk("types.js");

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;

const client = new Client({ name: "ts-downstream", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => ({
  action: "accept",
  content: { name: "Grace" },
  _meta: undefined,
}));
let changes = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  const { tools } = await client.listTools();
  out({ step: "changed", n: ++changes, tools: tools.map((t) => t.name) });
});
const transport = new StreamableHTTPClientTransport(new URL(endpoint));
await client.connect(transport);

const text = (res) => res.content?.[0]?.text;
const { tools } = await client.listTools();
const echoA = await client.callTool({ name: "tool_alpha_echo", arguments: { text: "a" } });
const echoB = await client.callTool({ name: "tool_beta_echo", arguments: { text: "b" } });
const prompt = await client.getPrompt({ name: "beta.greet", arguments: { name: "Ada" } });
const resource = await client.readResource({ uri: "test://static" });
const ask = await client.callTool({ name: "tool_beta_ask", arguments: {} });
out({
  step: "basics",
  protocolVersion: transport.protocolVersion,
  tools: tools.map((t) => t.name),
  echoA: text(echoA),
  echoB: text(echoB),
  prompt: prompt.messages[0].content.text,
  resource: resource.contents[0].text,
  ask: text(ask),
});

const abort = new AbortController();
const slow = client.callTool({ name: "tool_alpha_slow", arguments: {} }, undefined, { signal: abort.signal });
out({ step: "slow" });
if ((await next()) === "cancel") {
  abort.abort("cancelled by the test");
}
try {
  await slow;
  out({ step: "cancelled", error: "" });
} catch (e) {
  out({ step: "cancelled", error: String(e) });
}

// The test adds a server now; the notification handler reports.
while ((await next()) !== "quit") {}
await client.close();
