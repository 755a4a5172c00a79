// app.js: the agentmcp dashboard. Everything from the server is put on the
// page with textContent or as attribute values, never as HTML.
import { connectAgent, errorText } from "./agent.js";
import { promptMessages, resourceContents, rawJSON, toolResult } from "./content.js";
import { el, isObject, jsonText, safeURL, str, uid } from "./dom.js";
import { schemaForm } from "./forms.js";
import { callStats } from "./stats.js";
import { serverLogs } from "./logs.js";
import { auditLog } from "./audit.js";
import { exposureEditor } from "./exposure.js";
import { awakeLine } from "./busy.js";
import { toolSearch } from "./toolsearch.js";
import { taskList } from "./tasks.js";
import { pinsPanel } from "./pins.js";
import { approvalQueue } from "./approvals.js";
import { policyEditor } from "./policy.js";
import { showView, viewURI } from "./apps.js";

const $ = (id) => document.getElementById(id);

const meta = document.querySelector('meta[name="agentmcp-default-agent"]');
const params = new URLSearchParams(location.search);
const agentRef = params.get("agent") || (meta && meta.content) || "agentmcp/default";
const [agentClass, agentName = "default"] = agentRef.split("/");
const currentAgent = `${agentClass}/${agentName}`;
$("agent-name").textContent = currentAgent;

const STATUS_TEXT = {
  connecting: "connecting…",
  open: "live",
  reconnecting: "disconnected",
  unauthorized: "access token required",
  unknown_agent: "no such agent",
  closed: "closed",
};

let lastMcp = null;

const conn = connectAgent({
  agent: agentClass,
  name: agentName,
  onMcpUpdate(mcp) {
    lastMcp = mcp;
    render();
    awake.refresh();
  },
  onElicitations: renderElicitations,
  onStatus(status) {
    const s = $("status");
    s.dataset.status = status;
    s.textContent = STATUS_TEXT[status] || status;
    const notice = $("notice");
    if (status === "unauthorized") {
      notice.replaceChildren(
        "This server needs its access token. Open the dashboard link that agentmcp serve printed (it ends in /?token=…).",
      );
      notice.hidden = false;
    } else if (status === "unknown_agent") {
      notice.replaceChildren(...unknownAgentNotice());
      notice.hidden = false;
    } else if (status === "open") {
      notice.hidden = true;
      refreshAgents();
      stats.refresh();
      awake.refresh();
      exposure.load();
      tasks.refresh();
      approvals.refresh();
      policy.load();
      audit.refresh();
    }
    render();
  },
});

// The servers' call figures (stats.js), in their own section.
const stats = callStats({
  conn,
  table: $("call-stats"),
  none: $("no-stats"),
  windowNote: $("stats-window"),
  servers: () => serverEntries(lastMcp),
});

// The agent's tasks (tasks.js), in their own section.
const tasks = taskList({ conn, list: $("tasks").tBodies[0], none: $("no-tasks"), more: $("more-tasks"), servers: () => serverEntries(lastMcp) });

// The agent's tool policy (policy.js), and the calls it asks a person
// about (approvals.js), in their own sections; each tool in the list
// shows its effective action.
const policy = policyEditor({ conn, summary: $("policy-summary"), form: $("policy-form"), status: $("policy-status"), tools: () => $("tools"), denied: $("tools-denied") });
const approvals = approvalQueue({
  conn,
  pending: $("approvals"),
  recent: $("approvals-recent").tBodies[0],
  none: $("no-approvals"),
  by: $("approvals-by"),
  servers: () => serverEntries(lastMcp),
  onAnswered: () => policy.load(),
});

// What keeps the agent awake (busy.js), on a line under the header.
const awake = awakeLine({ conn, line: $("awake") });
const search = toolSearch(conn, $("tool-search"), $("tool-search-status"), searchResults);

// The servers' log messages (logs.js), in their own section.
const logs = serverLogs({ conn, list: $("server-logs").tBodies[0], none: $("no-logs"), servers: () => serverEntries(lastMcp) });

// The agent's MCP endpoint and its exposure rules (exposure.js), in their
// own section.
const exposure = exposureEditor({
  conn,
  endpoint: $("mcp-endpoint"),
  form: $("exposure-form"),
  status: $("exposure-status"),
});

const pins = pinsPanel({ conn, section: $("pins-section"), list: $("pins"), by: $("approvals-by") });

// The agent's audit log (audit.js), in its own section.
const audit = auditLog({
  conn,
  form: $("audit-form"),
  list: $("audit").tBodies[0],
  none: $("no-audit"),
  exportLink: $("audit-export"),
  status: $("audit-status"),
});

// live reports whether the page shows the agent's state as it is now.
const live = () => conn.status === "open";

// agentLink is a link to the dashboard of agent ref ("class/name").
const agentLink = (ref) => el("a", { href: "/?agent=" + encodeURIComponent(ref), class: "mono" }, ref);

function unknownAgentNotice() {
  const nodes = [`There is no agent ${currentAgent}. `];
  if (conn.agents.length) {
    nodes.push("Agents: ");
    conn.agents.forEach((a, i) => nodes.push(i ? ", " : "", agentLink(a)));
    nodes.push(". ");
  }
  nodes.push("Adding a server below creates it.");
  return nodes;
}

// The agent picker lists the server's agents; choosing one opens its
// dashboard. "Other agent…" takes a class/name. The search box beside it
// narrows the list to the agents whose class/name holds what is typed
// (any case); Enter opens the first of them.
let knownAgents = [];

async function refreshAgents() {
  try {
    knownAgents = (await conn.listAgents()).map((a) => `${a.class}/${a.name}`);
  } catch {
    return;
  }
  $("agent-search").placeholder = `find an agent (${knownAgents.length})`;
  renderPicker();
}

// matchingAgents are the known agents that hold the search box's text.
function matchingAgents() {
  const q = $("agent-search").value.trim().toLowerCase();
  return q ? knownAgents.filter((r) => r.toLowerCase().includes(q)) : knownAgents;
}

function renderPicker() {
  const agents = matchingAgents();
  const picker = $("agent-picker");
  const refs = agents.includes(currentAgent) || $("agent-search").value.trim() ? agents : [currentAgent, ...agents];
  const q = $("agent-search").value.trim();
  picker.replaceChildren(
    ...(q && !refs.includes(currentAgent) ? [el("option", { value: currentAgent, selected: true, hidden: true }, currentAgent)] : []),
    ...refs.map((r) => el("option", { value: r, selected: r === currentAgent }, knownAgents.includes(r) ? r : `${r} (does not exist)`)),
    el("option", { value: "" }, q && agents.length === 0 ? `no agent holds “${q}”; other agent…` : "Other agent…"),
  );
  $("agent-search").dataset.matches = String(agents.length);
}
$("agent-search").addEventListener("input", renderPicker);
$("agent-search").addEventListener("keydown", (ev) => {
  if (ev.key !== "Enter") return;
  ev.preventDefault();
  const first = matchingAgents()[0];
  if (first) location.search = "?agent=" + encodeURIComponent(first);
});
$("agent-picker").addEventListener("change", (ev) => {
  const v = ev.target.value;
  if (v) {
    location.search = "?agent=" + encodeURIComponent(v);
    return;
  }
  $("agent-other").hidden = false;
  $("agent-other").querySelector("input").focus();
});
$("agent-other").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const v = String(new FormData(ev.target).get("agent") || "").trim();
  if (v) location.search = "?agent=" + encodeURIComponent(v.includes("/") ? v : `${agentClass}/${v}`);
});
refreshAgents();

// The servers in the agent's one order (mcp.order: agent.ServerOrder, by
// name then id, as agentmcp ls and the API list them).
const serverEntries = (mcp) => {
  const servers = isObject(mcp && mcp.servers) ? mcp.servers : {};
  const order = Array.isArray(mcp && mcp.order) ? mcp.order.filter((id) => Object.hasOwn(servers, id)) : [];
  const rest = Object.keys(servers).filter((id) => !order.includes(id));
  return [...order, ...rest].map((id) => [id, servers[id]]);
};

function render() {
  const mcp = lastMcp || { servers: {}, tools: [], prompts: [], resources: [], resourceTemplates: [] };
  renderBanner();
  renderServers(mcp);
  pins.render(mcp.pins);
  stats.render();
  logs.render();
  renderTools(mcp);
  renderPrompts(mcp);
  renderResources(mcp);
}

// renderBanner says when the page is not live: every state below is the
// last one received, unknown now.
function renderBanner() {
  const b = $("stream-banner");
  const down = !live() && conn.downSince && conn.status !== "unknown_agent";
  document.body.classList.toggle("stale", Boolean(down));
  b.hidden = !down;
  if (down) {
    b.replaceChildren(
      el("strong", {}, `Disconnected from serve since ${conn.downSince.toLocaleTimeString()}.`),
      " Server states are unknown until the connection returns; the rows show the last ones known. Reconnecting…",
    );
  }
}

const STATE_TEXT = { authenticating: "sign-in needed", "not-connected": "not connected" };

// retryText says when a failed server's next try is, at now (ms): as
// agentmcp ls says it.
function retryText(at, now) {
  const d = Math.round((at - now) / 1000);
  if (!(d > 0)) return "retrying now";
  if (d < 60) return `retrying, next try in ${d} s`;
  const m = Math.floor(d / 60);
  return d % 60 ? `retrying, next try in ${m} min ${d % 60} s` : `retrying, next try in ${m} min`;
}

// retryNode counts down to a failed server's next try (tickRetries
// updates it every second).
function retryNode(s) {
  const at = Date.parse(str(s.nextRetryAt));
  if (s.state !== "failed" || !Number.isFinite(at)) return null;
  return el("small", { class: "retry muted", dataset: { at: String(at) } }, retryText(at, Date.now()));
}

function tickRetries() {
  const now = Date.now();
  for (const n of document.querySelectorAll(".retry[data-at]")) n.textContent = retryText(Number(n.dataset.at), now);
}
setInterval(tickRetries, 1000);

// The ids of the servers whose panel is open, and of those whose Remove
// waits for its confirmation: kept across renders.
const openPanels = new Set();
const confirming = new Set();

function renderServers(mcp) {
  const stale = !live();
  const since = conn.downSince ? conn.downSince.toLocaleTimeString() : "";
  const rows = serverEntries(mcp).map(([id, s]) => {
    const state = stale
      ? el(
          "span",
          { class: "state", dataset: { state: "unknown" }, title: `last known: ${str(s.state)}` },
          "unknown",
          el("small", { class: "muted" }, ` (was ${STATE_TEXT[s.state] || str(s.state)}; disconnected from serve since ${since})`),
        )
      : el("span", { class: "state", dataset: { state: str(s.state) } }, STATE_TEXT[s.state] || str(s.state));
    const open = openPanels.has(id);
    const row = el(
      "tr",
      { dataset: { serverId: id }, class: stale ? "stale" : null },
      el("td", {}, str(s.name)),
      el("td", { class: "mono" }, id),
      el("td", {}, state, stale ? null : retryNode(s)),
      el("td", {}, str(s.transport)),
      el("td", { class: "mono url" }, serverTarget(s)),
      el("td", { class: "error" }, errorNode(s)),
      el(
        "td",
        { class: "actions" },
        ...(stale
          ? [detailsButton(id, s, open), removeButton(id, s, true)]
          : confirming.has(id)
            ? removeConfirmation(id, s)
            : [authorizeButton(id, s), reconnectButton(id, s), detailsButton(id, s, open), removeButton(id, s)]),
      ),
    );
    return open ? [row, serverPanel(id, s)] : [row];
  });
  for (const id of [...openPanels]) if (!Object.hasOwn(mcp.servers || {}, id)) openPanels.delete(id);
  for (const id of [...confirming]) if (!Object.hasOwn(mcp.servers || {}, id)) confirming.delete(id);
  $("servers").tBodies[0].replaceChildren(...rows.flat());
  const none = $("no-servers");
  none.hidden = rows.length > 0;
  none.textContent =
    conn.status === "unknown_agent"
      ? `The agent ${currentAgent} does not exist: adding a server below creates it.`
      : "No servers yet: add one below.";
}

// serverTarget is what a server is: its URL, or a stdio server's command
// line, working directory and the names of its environment variables (the
// values are never sent to the page).
function serverTarget(s) {
  if (!Array.isArray(s.command)) return str(s.server_url);
  let text = "$ " + s.command.map(str).map(shellWord).join(" ");
  if (s.cwd) text += ` (in ${str(s.cwd)})`;
  if (Array.isArray(s.env_names) && s.env_names.length) text += ` [env: ${s.env_names.map(str).join(", ")}]`;
  return text;
}

// shellWord quotes a command's word as a shell takes it (as agentmcp ls
// shows it).
function shellWord(w) {
  if (w !== "" && /^[A-Za-z0-9_\-.\/:@=,+]+$/.test(w)) return w;
  return "'" + w.replaceAll("'", "'\\''") + "'";
}

// detailsButton opens or closes the server's panel.
function detailsButton(id, s, open) {
  return el(
    "button",
    {
      type: "button",
      class: "details",
      "aria-expanded": open ? "true" : "false",
      title: `What ${str(s.name)} said of itself when it connected`,
      onclick: () => {
        if (openPanels.has(id)) openPanels.delete(id);
        else openPanels.add(id);
        render();
      },
    },
    open ? "Hide" : "Details",
  );
}

// serverPanel is a row under a server's with what it said of itself when
// it connected: its implementation, protocol version, session,
// capabilities and instructions.
function serverPanel(id, s) {
  const item = (label, value, cls) => [el("dt", {}, label), el("dd", { class: cls || null }, value || el("span", { class: "muted" }, "—"))];
  const info = isObject(s.serverInfo) ? [str(s.serverInfo.title) || str(s.serverInfo.name), str(s.serverInfo.version)].filter(Boolean).join(" ") : "";
  const caps = isObject(s.capabilities) ? Object.keys(s.capabilities).sort() : [];
  const connected = ["ready", "connected", "discovering"].includes(s.state);
  return el(
    "tr",
    { class: "server-panel", dataset: { serverId: id } },
    el(
      "td",
      { colspan: 7 },
      connected ? null : el("p", { class: "muted" }, "Not connected: what the server said of itself the last time, where known."),
      el(
        "dl",
        {},
        ...item("Server", info),
        ...item("Transport", str(s.transport)),
        ...item("Protocol version", str(s.protocolVersion), "mono protocol-version"),
        ...item("Session", str(s.sessionId) || (s.protocolVersion >= "2026-07-28" ? "none (this version has no sessions)" : ""), "mono session"),
        ...item("Capabilities", caps.length ? caps.join(", ") : "", "capabilities"),
        ...item("Tool definitions", toolCost(s), "tool-cost"),
        ...item("Instructions", str(s.instructions) ? el("pre", { class: "instructions" }, str(s.instructions)) : ""),
      ),
      isObject(s.capabilities) ? rawJSON(s.capabilities, "capabilities as sent") : null,
    ),
  );
}

// toolCost says what offering all of a server's tools costs a model's
// context: the JSON size of their definitions and its estimate in tokens,
// and whether they are the ones stored before the agent slept.
function toolCost(s) {
  if (typeof s.toolBytes !== "number" || s.toolBytes <= 0) return "";
  const kb = s.toolBytes < 1024 ? `${s.toolBytes} bytes` : `${(s.toolBytes / 1024).toFixed(1)} KiB`;
  return `${kb}, about ${Number(s.toolTokens) || 0} tokens` + (s.catalogStale ? " (stored; the server has not listed them again yet)" : "");
}

// errorNode shows a server's error: its short summary, with the whole
// error behind it when there is more.
function errorNode(s) {
  const full = errorText(str(s.error));
  const summary = errorText(str(s.error_summary)) || full;
  if (!summary) return null;
  if (!full || full === summary) return el("span", { class: "error-text" }, summary);
  return el(
    "details",
    { class: "error-details" },
    el("summary", { class: "error-text" }, summary),
    el("pre", { class: "mono" }, full),
  );
}

// authorizeButton opens the OAuth page in a popup; the state stream flips
// the server to ready when the authorization completes.
function authorizeButton(id, s) {
  const url = s.state === "authenticating" && s.auth_url ? safeURL(s.auth_url) : null;
  if (!url) return null;
  return el(
    "button",
    {
      type: "button",
      class: "authorize",
      title: `Sign in to ${str(s.name)}`,
      onclick: () => window.open(url, "agentmcp-oauth-" + id, "popup=yes,width=600,height=720,noopener"),
    },
    "Authorize",
  );
}

// reconnectButton connects a failed or not-connected server again.
function reconnectButton(id, s) {
  if (s.state !== "failed" && s.state !== "not-connected") return null;
  return el(
    "button",
    {
      type: "button",
      class: "reconnect",
      title: `Connect to ${str(s.name)} again`,
      onclick: async (ev) => {
        ev.target.disabled = true;
        ev.target.textContent = "Reconnecting…";
        try {
          await conn.reconnectMcpServer(id);
          $("notice").hidden = true;
        } catch (e) {
          showNotice(...failureNodes(`Reconnecting ${e.serverName || str(s.name) || id} failed`, e, "It keeps being retried in the background: its row shows when it is next tried."));
        } finally {
          ev.target.disabled = false;
          ev.target.textContent = "Reconnect";
        }
      },
    },
    "Reconnect",
  );
}

// removeButton asks to confirm the server's removal; it is disabled
// (stale) while the page is not live.
function removeButton(id, s, stale = false) {
  return el(
    "button",
    {
      type: "button",
      class: "remove",
      disabled: stale,
      title: stale ? "Not connected to serve" : `Remove ${str(s.name)} (${id})`,
      onclick: () => {
        confirming.add(id);
        render();
        document.querySelector(`#servers tr[data-server-id="${CSS.escape(id)}"] button.remove-confirm`)?.focus();
      },
    },
    "Remove",
  );
}

// removeConfirmation asks whether to remove the server: Remove removes
// it (its OAuth grant and stored session with it), Keep keeps it.
function removeConfirmation(id, s) {
  const keep = () => {
    confirming.delete(id);
    render();
  };
  return [
    el("span", { class: "confirm-text" }, `Remove ${str(s.name) || id}? `),
    el(
      "button",
      {
        type: "button",
        class: "remove remove-confirm",
        disabled: !live(),
        onclick: async (ev) => {
          ev.target.disabled = true;
          try {
            await conn.removeMcpServer(id);
          } catch (e) {
            showNotice(`Removing ${str(s.name) || id} failed: ${e.message}`);
          }
          confirming.delete(id);
          render();
        },
      },
      "Remove",
    ),
    el("button", { type: "button", class: "keep", onclick: keep, onkeydown: (ev) => ev.key === "Escape" && keep() }, "Keep"),
  ];
}

// failureNodes say that something failed (head), in short (a
// connect_failed error's summary, else its message), what happens next,
// and the whole error behind a disclosure.
function failureNodes(head, e, next) {
  const summary = e.summary || e.message;
  const nodes = [el("span", { class: "failure-summary" }, `${head}: ${summary}.`)];
  if (e.code === "connect_failed" && next) nodes.push(" ", next);
  if (e.detail && e.detail !== summary) nodes.push(el("details", { class: "error-details" }, el("summary", {}, "Detail"), el("pre", { class: "mono" }, e.detail)));
  return nodes;
}

function showNotice(...nodes) {
  const n = $("notice");
  n.replaceChildren(...nodes);
  n.hidden = false;
}

// Catalog nodes are kept across updates (keyed by kind, server and name)
// so that a form being filled in, a call running or a result shown
// survives other changes.
const nodes = new Map(); // key -> {node, sig}

function keep(kind, serverId, item, key, build) {
  const k = kind + "\u0000" + serverId + "\u0000" + key;
  const sig = jsonText(item);
  let entry = nodes.get(k);
  if (!entry || entry.sig !== sig) {
    entry = { node: safeNode(kind, serverId, item, key, build), sig };
    nodes.set(k, entry);
  }
  entry.seen = true;
  return entry.node;
}

// safeNode is build(), or, should that fail on something a server sent, a
// node that says so: one item never keeps the others off the page.
function safeNode(kind, serverId, item, key, build) {
  try {
    return build();
  } catch (e) {
    console.warn(`agentmcp: cannot show ${kind}`, key, e);
    return el(
      "details",
      { class: kind, dataset: { serverId, [kind === "tool" ? "tool" : "key"]: key } },
      el("summary", {}, el("span", { class: "tool-name mono" }, key)),
      el("p", { class: "muted" }, `This ${kind} cannot be shown here; use the API.`),
    );
  }
}

// groups renders catalog entries ({serverId, kind, key, item, build})
// grouped by server, in server order, as "KIND-group" elements.
function groups(mcp, kind, entries) {
  const byServer = new Map();
  for (const x of entries) {
    if (!byServer.has(x.serverId)) byServer.set(x.serverId, []);
    byServer.get(x.serverId).push(x);
  }
  const out = [];
  for (const [id, s] of serverEntries(mcp)) {
    const list = byServer.get(id);
    if (!list) continue;
    out.push(
      el(
        "div",
        { class: `group ${kind}-group`, dataset: { serverId: id } },
        el("h3", {}, str(s.name), " ", el("span", { class: "muted mono" }, `(${id}, ${list.length})`)),
        ...list.map((x) => keep(x.kind, id, x.item, x.key, () => x.build(id, x.item))),
      ),
    );
  }
  return out;
}

// entriesOf turns a catalog list into group entries.
function entriesOf(items, kind, keyOf, build) {
  return (Array.isArray(items) ? items : [])
    .filter(isObject)
    .map((item) => ({ serverId: item.serverId, kind, key: keyOf(item), item, build }));
}

function sweep() {
  for (const [k, entry] of nodes) {
    if (!entry.seen) nodes.delete(k);
    entry.seen = false;
  }
}

function renderTools(mcp) {
  const tools = entriesOf(mcp.tools, "tool", (t) => str(t.name), toolNode);
  $("tool-count").textContent = `(${tools.length})`;
  $("no-tools").hidden = tools.length > 0;
  if (search.active()) {
    // The list shows the search's matches (searchResults); the catalog
    // changed, so search again.
    for (const x of tools) keep(x.kind, x.serverId, x.item, x.key, () => x.build(x.serverId, x.item));
    search.refresh();
    return;
  }
  $("tools").replaceChildren(...groups(mcp, "tool", tools));
  policy.decorate();
  if (live()) policy.toolsShown();
}

// searchResults shows the tool search's matches in rank order, each with
// its server and score; null puts the whole list back.
function searchResults(matches) {
  if (matches === null) {
    if (lastMcp) render();
    return;
  }
  const byKey = new Map((lastMcp && Array.isArray(lastMcp.tools) ? lastMcp.tools : []).filter(isObject).map((t) => [t.serverId + "\u0000" + t.name, t]));
  $("tools").replaceChildren(
    ...matches.filter(isObject).map((m) => {
      const item = byKey.get(m.serverId + "\u0000" + m.name) || { name: m.name, description: m.description, inputSchema: m.inputSchema, serverId: m.serverId };
      return el(
        "div",
        { class: "tool-match", dataset: { serverId: str(m.serverId), tool: str(m.name) } },
        el("span", { class: "muted mono" }, `${str(m.serverId)} · score ${Number(m.score).toFixed(2)}`),
        keep("tool", str(m.serverId), item, str(m.name), () => toolNode(str(m.serverId), item)),
      );
    }),
  );
  policy.decorate();
}

function renderPrompts(mcp) {
  const prompts = entriesOf(mcp.prompts, "prompt", (p) => str(p.name), promptNode);
  $("prompts").replaceChildren(...groups(mcp, "prompt", prompts));
  $("prompt-count").textContent = `(${prompts.length})`;
  $("no-prompts").hidden = prompts.length > 0;
}

function renderResources(mcp) {
  const all = [
    ...entriesOf(mcp.resources, "resource", (r) => str(r.uri), resourceNode),
    ...entriesOf(mcp.resourceTemplates, "template", (r) => str(r.uriTemplate), templateNode),
  ];
  $("resources").replaceChildren(...groups(mcp, "resource", all));
  $("resource-count").textContent = `(${all.length})`;
  $("no-resources").hidden = all.length > 0;
  sweep();
}

// summaryOf is the summary line of a catalog item: name and description.
function summaryOf(name, description, extra) {
  return el(
    "summary",
    {},
    el("span", { class: "tool-name mono" }, name),
    extra ? el("span", { class: "muted mono" }, " " + extra) : null,
    str(description) ? el("span", { class: "muted" }, " — " + str(description)) : null,
  );
}

// reader reads resources of server id, for resource links in results.
const reader = (id) => (uri) => conn.readResource(id, uri);

// runner wires a form to a call: the button calls run(signal), a Cancel
// button aborts it (which cancels the call on the MCP server), and the
// result box shows what show(result) returns.
function runner(form, label, run, show) {
  const result = el("div", { class: "result", "aria-live": "polite" });
  const button = el("button", { type: "submit" }, label);
  const cancel = el("button", { type: "button", class: "cancel", hidden: true }, "Cancel");
  let ctrl = null;
  cancel.addEventListener("click", () => ctrl && ctrl.abort());
  form.append(el("div", { class: "form-actions" }, button, cancel), result);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let call;
    try {
      call = run();
    } catch (e) {
      result.dataset.outcome = "error";
      result.replaceChildren(el("p", { class: "error-text" }, e.message));
      return;
    }
    ctrl = new AbortController();
    button.disabled = true;
    cancel.hidden = false;
    result.dataset.outcome = "pending";
    const started = new Date();
    result.replaceChildren(el("p", { class: "muted" }, `running since ${started.toLocaleTimeString()}…`));
    const mine = ctrl;
    const onProgress = (p) => {
      if (ctrl === mine) showProgress(result, started, p);
    };
    try {
      const res = await call(ctrl.signal, onProgress);
      result.dataset.outcome = res && res.isError ? "error" : "ok";
      result.replaceChildren(...show(res));
    } catch (e) {
      if (ctrl.signal.aborted) {
        result.dataset.outcome = "cancelled";
        result.replaceChildren(el("p", { class: "muted" }, "Cancelled: the call was cancelled on the MCP server."));
      } else {
        result.dataset.outcome = "error";
        result.replaceChildren(el("p", { class: "error-text" }, `Error (${e.code || "network"}): ${e.message}`));
      }
    } finally {
      ctrl = null;
      button.disabled = false;
      cancel.hidden = true;
      stats.refresh(); // the call is in the figures now
      audit.refresh(); // and in the audit log
      tasks.refresh(); // and its task, if it ran as one, has ended or runs on
    }
  });
  return form;
}

// showProgress shows a call's progress in its result box: a bar (one
// that moves to and fro when the server gives no total), where the call
// is, and the server's message.
function showProgress(result, started, p) {
  const progress = typeof p.progress === "number" && Number.isFinite(p.progress) ? p.progress : null;
  const total = typeof p.total === "number" && Number.isFinite(p.total) && p.total > 0 ? p.total : null;
  const bar = el("progress", { class: "call-progress", max: total ?? null, value: total !== null && progress !== null ? Math.min(progress, total) : null });
  const where = total !== null ? `${progress ?? 0} of ${total}` : progress !== null ? `${progress}` : "";
  result.replaceChildren(
    el(
      "div",
      { class: "progress-line" },
      bar,
      el("span", { class: "progress-text" }, [where, str(p.message)].filter(Boolean).join(": ")),
    ),
    el("p", { class: "muted" }, `running since ${started.toLocaleTimeString()}…`),
  );
}

function toolNode(serverId, tool) {
  const { nodes: fields, collect } = schemaForm(tool.inputSchema || {});
  const form = el("form", { class: "call-form" }, ...fields);
  if (fields.length === 0) form.append(el("p", { class: "muted" }, "No arguments."));
  let called = {};
  runner(
    form,
    "Call " + str(tool.name),
    () => {
      const args = collect();
      called = args;
      return (signal, onProgress) => conn.callTool(serverId, tool.name, args, { signal, onProgress });
    },
    (res) => {
      const nodes = toolResult(res, reader(serverId));
      // A tool with a view (MCP Apps): the view, sandboxed, under Tool
      // views (apps.js).
      if (viewURI(tool) && !(res && res.isError)) {
        showView($("apps"), $("apps-section"), { conn, serverId, tool, args: called, result: res, tools: () => conn.mcp && conn.mcp.tools, onCall: () => stats.refresh() });
        nodes.unshift(el("p", { class: "muted app-shown" }, "Its view is shown under Tool views."));
      }
      return nodes;
    },
  );
  return el(
    "details",
    { class: "tool", dataset: { serverId, tool: str(tool.name) } },
    summaryOf(str(tool.name), tool.description),
    rawJSON(tool.inputSchema || {}, "input schema"),
    form,
  );
}

function promptNode(serverId, prompt) {
  const args = (Array.isArray(prompt.arguments) ? prompt.arguments : []).filter((a) => isObject(a) && str(a.name));
  const inputs = [];
  const form = el("form", { class: "call-form" });
  for (const a of args) {
    const id = uid();
    const input = el("input", { id, name: a.name, type: "text", required: a.required === true });
    inputs.push({ name: a.name, input, req: a.required === true });
    form.append(
      el(
        "label",
        { for: id },
        el("span", { class: "mono" }, a.name),
        a.required === true ? el("span", { class: "req", title: "required" }, " *") : null,
        str(a.description) ? el("small", { class: "muted" }, " — " + str(a.description)) : null,
      ),
      input,
    );
  }
  if (args.length === 0) form.append(el("p", { class: "muted" }, "No arguments."));
  runner(
    form,
    "Get prompt",
    () => {
      const values = {};
      for (const f of inputs) if (f.input.value !== "" || f.req) Object.defineProperty(values, f.name, { value: f.input.value, enumerable: true });
      return (signal) => conn.getPrompt(serverId, prompt.name, values, { signal });
    },
    (res) => promptMessages(res, reader(serverId)),
  );
  return el("details", { class: "prompt", dataset: { serverId, prompt: str(prompt.name) } }, summaryOf(str(prompt.name), prompt.description), form);
}

function resourceNode(serverId, r) {
  const form = el("form", { class: "call-form" });
  runner(
    form,
    "Read",
    () => (signal) => conn.readResource(serverId, r.uri, { signal }),
    (res) => [...resourceContents(res && res.contents), rawJSON(res)],
  );
  return el(
    "details",
    { class: "resource", dataset: { serverId, uri: str(r.uri) } },
    summaryOf(str(r.title) || str(r.name) || str(r.uri), r.description, `${str(r.uri)}${r.mimeType ? " · " + str(r.mimeType) : ""}`),
    form,
  );
}

// templateVars returns the variables of a URI template (RFC 6570), in
// order, without operators or modifiers.
function templateVars(t) {
  const vars = [];
  for (const m of str(t).matchAll(/\{([^}]*)\}/g)) {
    for (const v of m[1].replace(/^[+#./;?&]/, "").split(",")) {
      const name = v.replace(/(\*|:\d+)$/, "").trim();
      if (name && !vars.includes(name)) vars.push(name);
    }
  }
  return vars;
}

// expand fills a URI template's simple expressions ({var}, {+var},
// {/var}, {?a,b}, ...) with values.
function expand(t, values) {
  return str(t).replace(/\{([^}]*)\}/g, (_, expr) => {
    const op = /^[+#./;?&]/.test(expr) ? expr[0] : "";
    const names = expr.slice(op.length).split(",").map((v) => v.replace(/(\*|:\d+)$/, "").trim());
    const enc = op === "+" || op === "#" ? encodeURI : encodeURIComponent;
    const parts = names.filter((n) => values[n] !== undefined && values[n] !== "");
    if (op === "?" || op === "&") return parts.length ? op + parts.map((n) => `${n}=${enc(values[n])}`).join("&") : "";
    if (op === ";") return parts.map((n) => `;${n}=${enc(values[n])}`).join("");
    const sep = op === "/" ? "/" : op === "." ? "." : ",";
    const lead = op === "/" || op === "." || op === "#" ? op : "";
    return parts.length ? lead + parts.map((n) => enc(values[n])).join(sep) : "";
  });
}

function templateNode(serverId, t) {
  const vars = templateVars(t.uriTemplate);
  const form = el("form", { class: "call-form" });
  const inputs = vars.map((v) => {
    const id = uid();
    const input = el("input", { id, name: v, type: "text", required: true });
    form.append(el("label", { for: id }, el("span", { class: "mono" }, v)), input);
    return [v, input];
  });
  runner(
    form,
    "Read",
    () => {
      const uri = expand(t.uriTemplate, Object.fromEntries(inputs.map(([v, input]) => [v, input.value])));
      return (signal) => conn.readResource(serverId, uri, { signal });
    },
    (res) => [...resourceContents(res && res.contents), rawJSON(res)],
  );
  return el(
    "details",
    { class: "template", dataset: { serverId, uriTemplate: str(t.uriTemplate) } },
    summaryOf(str(t.title) || str(t.name) || str(t.uriTemplate), t.description, `${str(t.uriTemplate)} (template)`),
    form,
  );
}

// The add form. Adding a server to an agent that does not exist creates
// the agent. It adds stdio servers (a command) only when the server allows
// such adds (serve --allow-stdio-servers); otherwise their fields are
// removed from the page.
const addForm = $("add-form");
const stdioAdds = document.querySelector('meta[name="agentmcp-stdio-adds"]')?.content === "true";

// setAddKind shows the fields of one kind of server ("url" or "command");
// the others are hidden and disabled, so they are neither required nor
// sent.
function setAddKind(kind) {
  for (const node of addForm.querySelectorAll("[data-kind]")) {
    const on = node.dataset.kind === kind;
    node.hidden = !on;
    for (const input of node.querySelectorAll("input, select, textarea")) input.disabled = !on;
  }
  if (addForm.elements.command) addForm.elements.command.required = kind === "command";
}

if (stdioAdds) {
  $("add-kind").hidden = false;
  addForm.addEventListener("change", (ev) => {
    if (ev.target.name === "kind") setAddKind(ev.target.value);
  });
  setAddKind("url");
} else {
  for (const node of addForm.querySelectorAll('[data-kind="command"], #add-kind')) node.remove();
}

// commandOptions reads the command fields: {command, args, env, cwd}, or
// a string saying what is wrong.
function commandOptions(data) {
  const lines = (name) =>
    String(data.get(name) || "")
      .split("\n")
      .map((l) => l.replace(/\r$/, ""))
      .filter((l) => l.trim());
  const env = {};
  for (const line of lines("env")) {
    const i = line.indexOf("=");
    if (i <= 0) return "Environment: one NAME=value per line.";
    env[line.slice(0, i).trim()] = line.slice(i + 1);
  }
  const o = { command: String(data.get("command") || "").trim(), args: lines("args") };
  if (Object.keys(env).length) o.env = env;
  const cwd = String(data.get("cwd") || "").trim();
  if (cwd) o.cwd = cwd;
  return o;
}

addForm.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  const out = $("add-result");
  const data = new FormData(form);
  if (data.get("kind") === "command") {
    const options = commandOptions(data);
    if (typeof options === "string") {
      out.dataset.outcome = "error";
      out.textContent = options;
      return;
    }
    const id = String(data.get("id") || "").trim();
    if (id) options.id = id;
    if (data.get("keep")) options.keepIfUnreachable = true;
    await submitAdd(form, String(data.get("name")).trim(), undefined, options);
    return;
  }
  const headers = {};
  for (const line of String(data.get("headers") || "").split("\n")) {
    if (!line.trim()) continue;
    const i = line.indexOf(":");
    if (i <= 0) {
      out.dataset.outcome = "error";
      out.textContent = "Headers: one 'Name: value' per line.";
      return;
    }
    headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  const options = { transport: { type: String(data.get("transport") || "auto") } };
  if (Object.keys(headers).length) options.transport.headers = headers;
  const id = String(data.get("id") || "").trim();
  if (id) options.id = id;
  if (data.get("keep")) options.keepIfUnreachable = true;
  await submitAdd(form, String(data.get("name")).trim(), String(data.get("url")).trim(), options);
});

// submitAdd adds the server and says how it went; the form is cleared
// after a success (header and env values are never shown again).
async function submitAdd(form, name, url, options) {
  const out = $("add-result");
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  out.dataset.outcome = "pending";
  out.textContent = `connecting to ${name}…`;
  try {
    const res = await conn.addMcpServer(name, url, options);
    out.dataset.outcome = "ok";
    out.textContent =
      res.state === "authenticating" ? `Added as ${res.id}: sign-in needed (use Authorize).` : `Added as ${res.id}: ${res.state}.`;
    form.reset();
    if (stdioAdds) setAddKind("url");
  } catch (e) {
    out.dataset.outcome = "error";
    if (e.code === "connect_failed" && e.serverId) {
      out.replaceChildren(...failureNodes(e.serverName || name, e, "It is saved and retried in the background: press Reconnect in its row to try it now."));
      form.reset();
      if (stdioAdds) setAddKind("url");
    } else if (e.code === "connect_failed") {
      // Nothing was saved: the form keeps what was typed.
      out.replaceChildren(...failureNodes(name, e, "Nothing was saved: check the URL, or tick \u201cKeep it\u201d to keep the server and retry it in the background."));
    } else {
      out.textContent = `${e.message}`;
    }
  } finally {
    button.disabled = false;
    if (conn.status === "unknown_agent") conn.reconnectNow();
  }
}

// Pending elicitations: a server asks the user for input in the middle of
// a call. Nodes are kept by id, so that a form being filled in survives
// updates.
const elicitNodes = new Map(); // id -> node

function renderElicitations(list) {
  const seen = new Set();
  const out = list.map((e) => {
    seen.add(e.id);
    if (!elicitNodes.has(e.id)) elicitNodes.set(e.id, safeElicitationNode(e));
    return elicitNodes.get(e.id);
  });
  for (const id of [...elicitNodes.keys()]) if (!seen.has(id)) elicitNodes.delete(id);
  $("elicitations").replaceChildren(...out);
  $("elicitations-section").hidden = list.length === 0;
}

// safeElicitationNode is elicitationNode, or, should that fail on
// something a server sent, a node that says so, with the decline and
// cancel answers (the API can still answer it).
function safeElicitationNode(e) {
  try {
    return elicitationNode(e);
  } catch (err) {
    console.warn("agentmcp: cannot show elicitation", e && e.id, err);
    const out = el("output", { class: "muted" });
    const reply = (action) => async () => {
      try {
        await conn.answerElicitation(e.id, action);
        out.textContent = action === "decline" ? "Declined." : "Cancelled.";
      } catch (err2) {
        out.dataset.outcome = "error";
        out.textContent = err2.message;
      }
    };
    return el(
      "div",
      { class: "elicitation", dataset: { id: String(e.id), mode: "invalid" } },
      el("p", {}, el("span", { class: "mono" }, String(e.serverId)), " asks for input this page cannot show."),
      el(
        "div",
        { class: "form-actions" },
        el("button", { type: "button", class: "remove", onclick: reply("decline") }, "Decline"),
        el("button", { type: "button", class: "remove", onclick: reply("cancel") }, "Cancel"),
        out,
      ),
    );
  }
}

function elicitationNode(e) {
  const out = el("output", { class: "muted" });
  const answer = async (action, content, buttons) => {
    buttons.forEach((b) => (b.disabled = true));
    try {
      await conn.answerElicitation(e.id, action, content);
      out.dataset.outcome = "ok";
      out.textContent = action === "accept" ? "Sent." : action === "decline" ? "Declined." : "Cancelled.";
    } catch (err) {
      out.dataset.outcome = "error";
      out.textContent = err.message;
      buttons.forEach((b) => (b.disabled = false));
    }
  };
  const head = el(
    "p",
    {},
    el("span", { class: "mono" }, e.serverId),
    " asks: ",
    el("span", { class: "elicit-message" }, e.message),
  );
  if (e.mode === "url") {
    const url = safeURL(e.url);
    const open = el("button", { type: "button", class: "accept" }, "Open and accept");
    const decline = el("button", { type: "button", class: "remove" }, "Decline");
    const buttons = [open, decline];
    open.disabled = !url;
    open.addEventListener("click", () => {
      window.open(url, "_blank", "noopener,noreferrer");
      answer("accept", undefined, buttons);
    });
    decline.addEventListener("click", () => answer("decline", undefined, buttons));
    return el(
      "div",
      { class: "elicitation", dataset: { id: e.id, mode: "url" } },
      head,
      el("p", { class: "mono url" }, e.url || ""),
      el("div", { class: "form-actions" }, open, decline, out),
    );
  }
  let schema = {};
  try {
    schema = typeof e.requestedSchema === "string" ? JSON.parse(e.requestedSchema) : e.requestedSchema || {};
  } catch {}
  const { nodes: fields, collect } = schemaForm(schema);
  const send = el("button", { type: "submit" }, "Send");
  const decline = el("button", { type: "button", class: "remove" }, "Decline");
  const cancel = el("button", { type: "button", class: "remove" }, "Cancel");
  const buttons = [send, decline, cancel];
  const form = el("form", { class: "call-form" }, ...fields, el("div", { class: "form-actions" }, send, decline, cancel, out));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    let content;
    try {
      content = collect();
    } catch (err) {
      out.dataset.outcome = "error";
      out.textContent = err.message;
      return;
    }
    answer("accept", content, buttons);
  });
  decline.addEventListener("click", () => answer("decline", undefined, buttons));
  cancel.addEventListener("click", () => answer("cancel", undefined, buttons));
  return el("div", { class: "elicitation", dataset: { id: e.id, mode: "form" } }, head, form);
}
