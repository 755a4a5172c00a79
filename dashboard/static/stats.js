// stats.js: the dashboard's call figures: each server's tool calls over
// the last minutes (calls, error rate, p50 and p95 latency), from
// GET .../stats. They are not in the state stream (which would send a
// frame per call): the page asks for them every few seconds while it is
// visible and live, and at once after a call made from the page.
import { el, isObject } from "./dom.js";

// EVERY_MS is how often the figures are asked for.
const EVERY_MS = 5000;

// callStats shows the figures in the table's body. conn is the agent's
// connection (agent.js), servers() the [id, server] pairs to show, in
// order; windowNote is where the window's length is shown. It returns
// {refresh, render}: refresh asks for the figures now, render shows the
// last ones again (after the servers changed).
export function callStats({ conn, table, none, windowNote, servers }) {
  let last = null; // {windowSeconds, servers: {id: figures}}, as the API sent it
  let asOf = null; // when last was received
  let busy = false;
  let again = false;

  const live = () => conn.status === "open";
  const visible = () => document.visibilityState === "visible";

  async function refresh() {
    if (!live()) return;
    if (busy) {
      again = true; // a call ended during the request: ask once more after it
      return;
    }
    busy = true;
    try {
      const res = await conn.getStats();
      if (isObject(res) && isObject(res.servers)) {
        last = res;
        asOf = new Date();
      }
    } catch {
      // Kept: the last figures stay, shown as of when they came.
    } finally {
      busy = false;
    }
    render();
    if (again) {
      again = false;
      refresh();
    }
  }

  function render() {
    const figures = last ? last.servers : {};
    const stale = !live();
    if (last && Number.isFinite(last.windowSeconds)) {
      const minutes = Math.round(last.windowSeconds / 60);
      windowNote.textContent = `last ${minutes} minutes` + (asOf ? `, as of ${asOf.toLocaleTimeString()}` : "");
    }
    const rows = servers().map(([id, s]) => {
      const f = isObject(figures[id]) ? figures[id] : null;
      const calls = f ? num(f.calls) : 0;
      return el(
        "tr",
        // data-calls and data-errors hold the window's counts, for scripts.
        { dataset: f ? { serverId: id, calls: String(calls), errors: String(num(f.errors)) } : { serverId: id }, class: stale ? "stale" : null },
        el("td", {}, typeof s.name === "string" ? s.name : "", " ", el("small", { class: "mono muted" }, id)),
        el("td", { class: "calls num" }, f ? String(calls) : "–"),
        el("td", { class: "errors num" }, f ? String(num(f.errors)) : "–"),
        el("td", { class: "error-rate num", dataset: { bad: f && num(f.errors) > 0 ? "yes" : null } }, calls ? percent(num(f.errorRate)) : "–"),
        el("td", { class: "p50 num" }, calls ? millis(num(f.p50Ms)) : "–"),
        el("td", { class: "p95 num" }, calls ? millis(num(f.p95Ms)) : "–"),
        el(
          "td",
          { class: "total num muted", title: "since the server was added, or the agent woke, in this serve process" },
          f ? `${num(f.totalCalls)} calls, ${num(f.totalErrors)} errors` : "–",
        ),
      );
    });
    table.tBodies[0].replaceChildren(...rows);
    none.hidden = rows.length > 0;
  }

  // One poll loop, asking only while the page is visible and live.
  const tick = () => {
    if (visible()) refresh();
    setTimeout(tick, EVERY_MS);
  };
  setTimeout(tick, EVERY_MS);
  document.addEventListener("visibilitychange", () => {
    if (visible()) refresh();
  });
  return { refresh, render };
}

// num is v if it is a finite number, else 0.
const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

// percent shows a rate (0 to 1) as a percentage.
const percent = (r) => `${(r * 100).toFixed(r > 0 && r < 0.1 ? 1 : 0)} %`;

// millis shows a latency in milliseconds with about three digits.
function millis(ms) {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}
