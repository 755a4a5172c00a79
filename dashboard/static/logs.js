// logs.js: the servers' log messages (notifications/message), the last
// ones of each server, from GET .../logs. Like the call
// figures (stats.js), they are asked for every few seconds while the page
// is visible and live, not sent in the state stream.
import { el, isObject, str } from "./dom.js";

// EVERY_MS is how often the messages are asked for.
const EVERY_MS = 5000;

// SHOWN is how many messages are shown, newest last.
const SHOWN = 50;

// serverLogs shows the last messages of the agent's servers in list (a
// <tbody>), merged and in order of arrival. conn is the agent's
// connection (agent.js), servers() the [id, server] pairs; none is shown
// when there is no message. It returns {refresh, render}.
export function serverLogs({ conn, list, none, servers }) {
  let byServer = {}; // id -> [{time, level, logger, data}]
  let busy = false;

  const live = () => conn.status === "open";
  const visible = () => document.visibilityState === "visible";

  async function refresh() {
    if (!live() || busy) return;
    busy = true;
    try {
      // One request for all: asked server by server, a server removed
      // meanwhile would answer 404.
      const res = await conn.getLogs();
      const next = {};
      for (const s of isObject(res) && Array.isArray(res.servers) ? res.servers : []) {
        if (isObject(s) && typeof s.serverId === "string" && Array.isArray(s.logs)) {
          next[s.serverId] = s.logs.filter(isObject);
        }
      }
      byServer = next;
    } catch {
      // Kept: the last ones stay until the next answer.
    } finally {
      busy = false;
    }
    render();
  }

  function render() {
    const names = Object.fromEntries(servers().map(([id, s]) => [id, str(s && s.name) || id]));
    const all = [];
    for (const [id, logs] of Object.entries(byServer)) {
      if (!Object.hasOwn(names, id)) continue; // removed since
      for (const m of logs) all.push({ id, m, t: Date.parse(str(m.time)) || 0 });
    }
    all.sort((a, b) => a.t - b.t);
    const rows = all.slice(-SHOWN).map(({ id, m, t }) =>
      el(
        "tr",
        { dataset: { serverId: id, level: str(m.level) } },
        el("td", { class: "muted" }, t ? new Date(t).toLocaleTimeString() : ""),
        el("td", {}, names[id], names[id] !== id ? el("small", { class: "mono muted" }, " " + id) : null),
        el("td", { class: "level" }, str(m.level)),
        el("td", { class: "mono" }, str(m.logger) ? el("span", { class: "muted" }, str(m.logger) + ": ") : null, str(m.data)),
      ),
    );
    list.replaceChildren(...rows);
    none.hidden = rows.length > 0;
  }

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
