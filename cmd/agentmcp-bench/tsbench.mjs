// The TypeScript SDK's side of agentmcp-bench: sequential tools/call of
// "echo" through @modelcontextprotocol/sdk's Client and
// StreamableHTTPClientTransport, timed here in Node.
//
// Usage: node tsbench.mjs <node_modules dir> <server URL> <reps> <calls per rep> <warm-up calls>
// Prints one JSON object per rep: {"p50_us":..,"p99_us":..,"calls_per_s":..}.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [dir, url, reps, calls, warmup] = process.argv.slice(2);
const sdk = join(dir, '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'streamableHttp.js')).href);

const client = new Client({ name: 'ts-bench', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

const call = async () => {
  const res = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  if (res.isError || !res.content || res.content.length === 0) throw new Error('tool call failed');
};

for (let i = 0; i < Number(warmup); i++) await call();
for (let r = 0; r < Number(reps); r++) {
  const n = Number(calls);
  const lat = new Array(n);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await call();
    lat[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  lat.sort((a, b) => a - b);
  const rank = (p) => lat[Math.max(0, Math.min(n - 1, Math.ceil((p / 100) * n) - 1))];
  console.log(JSON.stringify({ p50_us: rank(50), p99_us: rank(99), calls_per_s: n / wall }));
}
await transport.terminateSession().catch(() => {});
await client.close();
