// app.js: the agentmcp dashboard. Everything from the server is put on the
// page with textContent or as attribute values, never as HTML.
import { connectAgent, errorText } from "./agent.js";

const $ = (id) => document.getElementById(id);

// el builds an element: props are attributes ("class", "dataset", on*
// listeners), children are nodes or strings (text).
function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

let uidSeq = 0;
const uid = () => "f" + ++uidSeq;

const meta = document.querySelector('meta[name="agentmcp-default-agent"]');
const params = new URLSearchParams(location.search);
const agentRef = params.get("agent") || (meta && meta.content) || "agentmcp/default";
const [agentClass, agentName = "default"] = agentRef.split("/");
$("agent-name").textContent = `${agentClass}/${agentName}`;

const STATUS_TEXT = {
  connecting: "connecting…",
  open: "live",
  reconnecting: "reconnecting…",
  unauthorized: "access token required",
  closed: "closed",
};

const conn = connectAgent({
  agent: agentClass,
  name: agentName,
  onMcpUpdate: render,
  onElicitations: renderElicitations,
  onStatus(status) {
    const s = $("status");
    s.dataset.status = status;
    s.textContent = STATUS_TEXT[status] || status;
    const notice = $("notice");
    if (status === "unauthorized") {
      notice.textContent =
        "This server needs its access token. Open the dashboard link that agentmcp serve printed (it ends in /?token=…).";
      notice.hidden = false;
    } else if (status === "open") {
      notice.hidden = true;
    }
  },
});

// The servers in display order: by name, then id.
const sortedServers = (mcp) =>
  Object.entries(mcp.servers).sort(([a, x], [b, y]) => x.name.localeCompare(y.name) || a.localeCompare(b));

function render(mcp) {
  renderServers(mcp);
  renderTools(mcp);
}

function renderServers(mcp) {
  const rows = sortedServers(mcp).map(([id, s]) =>
    el(
      "tr",
      { dataset: { serverId: id } },
      el("td", {}, s.name),
      el("td", { class: "mono" }, id),
      el("td", {}, el("span", { class: "state", dataset: { state: s.state } }, s.state)),
      el("td", {}, s.transport || ""),
      el("td", { class: "mono url" }, s.server_url),
      el("td", { class: "error" }, errorText(s.error)),
      el("td", { class: "actions" }, authorizeButton(id, s), removeButton(id, s)),
    ),
  );
  $("servers").tBodies[0].replaceChildren(...rows);
  $("no-servers").hidden = rows.length > 0;
}

// safeURL returns u when it is an http(s) URL, else null.
function safeURL(u) {
  try {
    const url = new URL(u);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
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
      onclick: () => window.open(url, "agentmcp-oauth-" + id, "popup=yes,width=600,height=720,noopener"),
    },
    "Authorize",
  );
}

function removeButton(id, s) {
  return el(
    "button",
    {
      type: "button",
      class: "remove",
      title: `Remove ${s.name} (${id})`,
      onclick: async (ev) => {
        ev.target.disabled = true;
        try {
          await conn.removeMcpServer(id);
        } catch (e) {
          ev.target.disabled = false;
          showNotice(`Removing ${id} failed: ${e.message}`);
        }
      },
    },
    "Remove",
  );
}

function showNotice(text) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = false;
}

// Tool nodes are kept across updates (keyed by server and name) so that a
// form being filled in or an open schema survives other servers' changes.
const toolNodes = new Map(); // key -> {node, sig}

function renderTools(mcp) {
  const byServer = new Map();
  for (const t of mcp.tools) {
    if (!byServer.has(t.serverId)) byServer.set(t.serverId, []);
    byServer.get(t.serverId).push(t);
  }
  const groups = [];
  const seen = new Set();
  for (const [id, s] of sortedServers(mcp)) {
    const tools = byServer.get(id);
    if (!tools) continue;
    const nodes = tools.map((t) => {
      const key = id + "\u0000" + t.name;
      seen.add(key);
      const sig = JSON.stringify(t);
      let entry = toolNodes.get(key);
      if (!entry || entry.sig !== sig) {
        entry = { node: safeToolNode(id, t), sig };
        toolNodes.set(key, entry);
      }
      return entry.node;
    });
    groups.push(
      el(
        "div",
        { class: "tool-group", dataset: { serverId: id } },
        el("h3", {}, s.name, " ", el("span", { class: "muted mono" }, `(${id}, ${tools.length} tools)`)),
        ...nodes,
      ),
    );
  }
  for (const key of [...toolNodes.keys()]) if (!seen.has(key)) toolNodes.delete(key);
  $("tools").replaceChildren(...groups);
  $("tool-count").textContent = `(${mcp.tools.length})`;
  $("no-tools").hidden = mcp.tools.length > 0;
}

// safeToolNode is toolNode, or, should that fail on something a server
// sent, a node that says so: one tool never keeps the others off the page.
function safeToolNode(serverId, tool) {
  try {
    return toolNode(serverId, tool);
  } catch (e) {
    console.warn("agentmcp: cannot show tool", tool && tool.name, e);
    return el(
      "details",
      { class: "tool", dataset: { serverId, tool: String(tool && tool.name) } },
      el("summary", {}, el("span", { class: "tool-name mono" }, String(tool && tool.name))),
      el("p", { class: "muted" }, "This tool's input schema cannot be shown; call it through the API."),
    );
  }
}

function toolNode(serverId, tool) {
  return el(
    "details",
    { class: "tool", dataset: { serverId, tool: tool.name } },
    el(
      "summary",
      {},
      el("span", { class: "tool-name mono" }, tool.name),
      str(tool.description) ? el("span", { class: "muted" }, " — " + str(tool.description)) : null,
    ),
    el(
      "details",
      { class: "schema" },
      el("summary", {}, "input schema"),
      el("pre", { class: "mono" }, JSON.stringify(tool.inputSchema || {}, null, 2)),
    ),
    toolForm(serverId, tool),
  );
}

// A schema comes from a server and may be any JSON value: these helpers
// read it without ever throwing (no property access on null, no string
// conversion of objects, which can throw: {"toString": 1}).

// isObject reports whether v is a JSON object (not null, not an array).
function isObject(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// str is v when it is a string, else "".
function str(v) {
  return typeof v === "string" ? v : "";
}

// jsonText shows any JSON value as text: strings as they are, the rest as
// JSON.
function jsonText(v) {
  return typeof v === "string" ? v : (JSON.stringify(v) ?? "");
}

// fieldType is the JSON type a property's input collects, "" when the
// property does not say (or is not a schema object).
function fieldType(p) {
  if (!isObject(p)) return "";
  const t = Array.isArray(p.type) ? p.type.find((x) => typeof x === "string" && x !== "null") : p.type;
  if (typeof t === "string" && t !== "") return t;
  return isObject(p.properties) ? "object" : "";
}

// schemaFields builds inputs for a JSON schema's properties: text, number
// and checkbox inputs for scalars, a select for enums, a JSON text area for
// the rest (and for properties that are not schema objects). It returns
// the label and input nodes, and the fields collect reads. Any JSON value
// is taken: properties that are not an object mean none, a required that
// is not an array of strings is ignored.
function schemaFields(schema) {
  const props = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const required = new Set(
    isObject(schema) && Array.isArray(schema.required) ? schema.required.filter((x) => typeof x === "string") : [],
  );
  const fields = [];
  const nodes = [];
  for (const [name, raw] of Object.entries(props)) {
    const p = isObject(raw) ? raw : {};
    const desc = str(p.description) || str(p.title);
    const id = uid();
    const type = fieldType(p);
    const req = required.has(name);
    let input;
    let kind;
    if (Array.isArray(p.enum)) {
      kind = "enum";
      input = el(
        "select",
        { id, name, required: req },
        req ? null : el("option", { value: "" }, ""),
        ...p.enum.map((v) => el("option", { value: JSON.stringify(v) }, jsonText(v))),
      );
    } else if (type === "boolean") {
      kind = "boolean";
      input = el("input", { id, name, type: "checkbox" });
    } else if (type === "integer" || type === "number") {
      kind = "number";
      input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", required: req });
    } else if (type === "string") {
      kind = "string";
      input = el("input", { id, name, type: "text", required: req });
    } else {
      kind = "json";
      input = el("textarea", { id, name, rows: 2, placeholder: type ? `JSON ${type}` : "JSON" });
    }
    fields.push({ name, kind, input, req });
    nodes.push(
      el(
        "label",
        { for: id },
        el("span", { class: "mono" }, name),
        req ? el("span", { class: "req", title: "required" }, " *") : null,
        type ? el("span", { class: "muted" }, ` ${type}`) : null,
        desc ? el("small", { class: "muted" }, " — " + desc) : null,
      ),
      input,
    );
  }
  return { fields, nodes };
}

// toolForm is a form generated from the tool's input schema.
function toolForm(serverId, tool) {
  const { fields, nodes } = schemaFields(tool.inputSchema || {});
  const form = el("form", { class: "call-form" }, ...nodes);
  if (fields.length === 0) form.append(el("p", { class: "muted" }, "No arguments."));
  const result = el("pre", { class: "result mono", "aria-live": "polite" });
  const button = el("button", { type: "submit" }, "Call " + tool.name);
  form.append(el("div", { class: "form-actions" }, button), result);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let args;
    try {
      args = collect(fields);
    } catch (e) {
      result.dataset.outcome = "error";
      result.textContent = e.message;
      return;
    }
    button.disabled = true;
    result.dataset.outcome = "pending";
    result.textContent = "calling…";
    try {
      const res = await conn.callTool(serverId, tool.name, args);
      result.dataset.outcome = res.isError ? "error" : "ok";
      result.textContent = formatResult(res);
    } catch (e) {
      result.dataset.outcome = "error";
      result.textContent = `Error (${e.code || "network"}): ${e.message}`;
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

// put sets args[name] as an own property, even for names like
// "__proto__" that a plain assignment would not.
function put(args, name, value) {
  Object.defineProperty(args, name, { value, enumerable: true, writable: true, configurable: true });
}

function collect(fields) {
  const args = {};
  for (const f of fields) {
    const v = f.input.value;
    switch (f.kind) {
      case "boolean":
        if (f.input.checked || f.req) put(args, f.name, f.input.checked);
        break;
      case "number":
        if (v !== "") put(args, f.name, Number(v));
        break;
      case "string":
        if (v !== "" || f.req) put(args, f.name, v);
        break;
      case "enum":
        if (v !== "") put(args, f.name, JSON.parse(v));
        break;
      default:
        if (v.trim() !== "") {
          try {
            put(args, f.name, JSON.parse(v));
          } catch (e) {
            throw new Error(`${f.name}: invalid JSON (${e.message})`);
          }
        }
    }
  }
  return args;
}

// formatResult shows a CallToolResult: its text content first, then the
// whole result as JSON.
function formatResult(res) {
  const texts = (res.content || []).filter((c) => c.type === "text").map((c) => c.text);
  const head = res.isError ? "Tool error:\n" : "";
  return head + (texts.length ? texts.join("\n") + "\n\n" : "") + JSON.stringify(res, null, 2);
}

// The add form.
$("add-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  const out = $("add-result");
  const data = new FormData(form);
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
  const name = String(data.get("name")).trim();
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  out.dataset.outcome = "pending";
  out.textContent = `connecting to ${name}…`;
  try {
    const res = await conn.addMcpServer(name, String(data.get("url")).trim(), options);
    out.dataset.outcome = "ok";
    out.textContent =
      res.state === "authenticating" ? `Added as ${res.id}: authorization needed (use Authorize).` : `Added as ${res.id}: ${res.state}.`;
    form.reset();
  } catch (e) {
    out.dataset.outcome = "error";
    out.textContent = `${e.message}`;
  } finally {
    button.disabled = false;
  }
});

// Pending elicitations: a server asks the user for input in the middle of
// a call. Nodes are kept by id, so that a form being filled in survives
// updates.
const elicitNodes = new Map(); // id -> node

function renderElicitations(list) {
  const seen = new Set();
  const nodes = list.map((e) => {
    seen.add(e.id);
    if (!elicitNodes.has(e.id)) elicitNodes.set(e.id, safeElicitationNode(e));
    return elicitNodes.get(e.id);
  });
  for (const id of [...elicitNodes.keys()]) if (!seen.has(id)) elicitNodes.delete(id);
  $("elicitations").replaceChildren(...nodes);
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
  const { fields, nodes } = schemaFields(schema);
  const send = el("button", { type: "submit" }, "Send");
  const decline = el("button", { type: "button", class: "remove" }, "Decline");
  const cancel = el("button", { type: "button", class: "remove" }, "Cancel");
  const buttons = [send, decline, cancel];
  const form = el("form", { class: "call-form" }, ...nodes, el("div", { class: "form-actions" }, send, decline, cancel, out));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    let content;
    try {
      content = collect(fields);
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
