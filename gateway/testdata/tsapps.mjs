// The official TypeScript SDK's client, as an MCP Apps host would use it,
// against an agent's MCP endpoint (apps_test.go runs it with the pinned
// Node 22).
//
// Usage: node tsapps.mjs <node_modules dir> <endpoint URL> <tool>...
//
// It declares the MCP Apps extension, lists the tools until each named
// tool is there, reads the view each of them names (_meta.ui.resourceUri),
// and prints one JSON line: {views: {tool: uri}, html: {uri: text},
// mimeTypes: {uri: type}, resources: [uri...]}.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [dir, endpoint, ...want] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(dir, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const client = new Client(
  { name: "ts-apps-host", version: "1.0.0" },
  { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));

let tools = [];
for (let i = 0; i < 200; i++) {
  ({ tools } = await client.listTools());
  if (want.every((w) => tools.some((t) => t.name === w))) break;
  await new Promise((r) => setTimeout(r, 50));
}
const views = {};
const html = {};
const mimeTypes = {};
for (const t of tools) {
  const uri = t._meta?.ui?.resourceUri;
  if (typeof uri !== "string") continue;
  views[t.name] = uri;
  const res = await client.readResource({ uri });
  const c = res.contents.find((c) => c.uri === uri);
  html[uri] = c?.text ?? null;
  mimeTypes[uri] = c?.mimeType ?? null;
}
const { resources } = await client.listResources();
process.stdout.write(JSON.stringify({ step: "views", views, html, mimeTypes, resources: resources.map((r) => r.uri) }) + "\n");
await client.close();
