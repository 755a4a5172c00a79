// apps.js: the dashboard as a host of MCP Apps views (the extension
// io.modelcontextprotocol/ui). A tool may name a view, a ui:// resource of
// its server holding an HTML page; after a call of the tool from the
// dashboard, appView frames it and speaks the extension's postMessage
// JSON-RPC with it.
//
// The view is the server's code, hostile until proven otherwise:
//   - it is framed from GET .../servers/{id}/view?tool=, sandboxed with
//     scripts alone (sandbox="allow-scripts", and the route's own CSP says
//     so too): an opaque origin, so no cookie, no storage, no same-origin
//     request to the API, no access to this page's DOM; the route's CSP
//     lets it reach only what its resource's _meta.ui.csp lists, never
//     the dashboard's host;
//   - this page listens to messages from that frame's window alone, and
//     does for it only what the extension defines: it sends the tool's
//     input and result; it calls tools of the SAME server through the
//     agent's API, as the dashboard's own calls go (policy, approvals,
//     the call figures), each call listed under the view; a link it asks
//     to open is shown, and opens in a new tab only when the user clicks
//     it; a message (ui/message) is shown, and sent nowhere.
import { el, isObject, jsonText, safeURL, str } from "./dom.js";

// PROTOCOL is the extension's protocol version this host speaks.
const PROTOCOL = "2026-01-26";

// The view's frame: at most this tall, whatever size it asks for.
const MAX_HEIGHT = 1600;

// The views kept on the page: the newest ones.
const MAX_VIEWS = 3;

// showView shows a tool's view (appView's options) first in container,
// which keeps the MAX_VIEWS newest, and unhides section. Views live in a
// container of their own: a frame that moves in the page loads again.
export function showView(container, section, opts) {
  container.prepend(appView(opts));
  while (container.children.length > MAX_VIEWS) container.lastElementChild.remove();
  section.hidden = false;
}

// viewURI returns the ui:// URI of a tool's view, "" when it has none.
export function viewURI(tool) {
  const meta = isObject(tool) && isObject(tool._meta) ? tool._meta : {};
  const ui = isObject(meta.ui) ? meta.ui : {};
  const uri = str(ui.resourceUri) || str(meta["ui/resourceUri"]);
  return uri.startsWith("ui://") ? uri : "";
}

// forView reports whether a tool may be called by a view: its
// _meta.ui.visibility, when it has one, lists "app".
function forView(tool) {
  const ui = isObject(tool._meta) && isObject(tool._meta.ui) ? tool._meta.ui : {};
  return !Array.isArray(ui.visibility) || ui.visibility.includes("app");
}

// appView returns the element that shows the view of tool (of server
// serverId) after a call with args that gave result. tools() returns the
// agent's current tools (conn.mcp.tools); onCall(name) is called after each
// call the view makes.
export function appView({ conn, serverId, tool, args, result, tools, onCall = () => {} }) {
  const name = str(tool.name);
  const src = `${conn.url}/servers/${encodeURIComponent(serverId)}/view?tool=${encodeURIComponent(name)}`;
  // The sandbox is set before the frame has a src, and so applies to its
  // first load.
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.setAttribute("title", `view of ${name}`);
  frame.className = "app-frame";
  frame.src = src;
  const log = el("ul", { class: "app-log", "aria-live": "polite" });
  const box = el(
    "div",
    { class: "app-view", dataset: { serverId, tool: name, state: "loading" } },
    el("p", { class: "muted" }, `The tool's view (${viewURI(tool)}), sandboxed: it reaches the dashboard only through the requests listed below it.`),
    frame,
    log,
  );
  const note = (kind, ...children) => log.append(el("li", { class: "app-" + kind }, ...children));

  const post = (msg) => {
    if (frame.contentWindow) frame.contentWindow.postMessage({ jsonrpc: "2.0", ...msg }, "*");
  };
  const reply = (id, res) => post({ id, result: res });
  const fail = (id, code, message) => post({ id, error: { code, message } });
  let sent = false;
  const sendData = () => {
    if (sent) return;
    sent = true;
    post({ method: "ui/notifications/tool-input", params: { arguments: isObject(args) ? args : {} } });
    post({ method: "ui/notifications/tool-result", params: isObject(result) ? result : {} });
    box.dataset.state = "shown";
  };

  const callFromView = async (id, params) => {
    const p = isObject(params) ? params : {};
    const target = str(p.name);
    const def = (tools() || []).find((t) => isObject(t) && t.serverId === serverId && t.name === target);
    const entry = el("li", { class: "app-call", dataset: { tool: target, outcome: "pending" } }, `The view calls ${target} of ${serverId}… `);
    log.append(entry);
    if (!def || !forView(def)) {
      entry.dataset.outcome = "refused";
      entry.append(def ? "refused: the server keeps it from views." : "refused: its server has no such tool.");
      fail(id, -32602, def ? `tool ${target} is not for views` : `unknown tool ${target}`);
      return;
    }
    try {
      const res = await conn.callTool(serverId, target, isObject(p.arguments) ? p.arguments : {});
      entry.dataset.outcome = res && res.isError ? "error" : "ok";
      entry.append(res && res.isError ? "the tool reported an error." : "done.");
      reply(id, res);
    } catch (e) {
      entry.dataset.outcome = "failed";
      entry.append(`failed (${e.code || "network"}): ${e.message}`);
      fail(id, -32000, `${e.code || "error"}: ${e.message}`);
    } finally {
      onCall(target);
    }
  };

  const handle = (msg) => {
    const { id, method, params } = msg;
    const isRequest = id !== undefined && id !== null;
    switch (method) {
      case "ui/initialize":
        sent = false; // a view that loads again gets its data again
        reply(id, {
          protocolVersion: PROTOCOL,
          hostInfo: { name: "agentmcp-dashboard", version: "1" },
          hostCapabilities: { openLinks: {}, serverTools: {}, message: { text: {} }, logging: {} },
          hostContext: {
            toolInfo: { tool },
            theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            containerDimensions: { maxHeight: MAX_HEIGHT },
            locale: navigator.language,
            platform: "web",
          },
        });
        return;
      case "ui/notifications/initialized":
        sendData();
        return;
      case "tools/call":
        if (isRequest) callFromView(id, params);
        return;
      case "ui/open-link": {
        const url = safeURL(isObject(params) ? params.url : null);
        if (!url) {
          note("link", "The view asked to open a link that is not http(s); refused.");
          if (isRequest) reply(id, { isError: true });
          return;
        }
        note(
          "link",
          "The view asks to open ",
          el("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: "app-open-link" }, url),
          " (only if you click it).",
        );
        if (isRequest) reply(id, {});
        return;
      }
      case "ui/message": {
        const content = isObject(params) && Array.isArray(params.content) ? params.content : [];
        const text = content.map((c) => (isObject(c) && c.type === "text" ? str(c.text) : jsonText(c))).join("\n");
        note("message", el("strong", {}, "The view's message (shown here, sent nowhere): "), text);
        if (isRequest) reply(id, {});
        return;
      }
      case "ui/notifications/size-changed": {
        const h = isObject(params) ? Number(params.height) : NaN;
        if (Number.isFinite(h) && h > 0) frame.style.height = `${Math.min(Math.ceil(h), MAX_HEIGHT)}px`;
        return;
      }
      case "ui/request-display-mode":
        if (isRequest) reply(id, { mode: "inline" });
        return;
      case "ui/update-model-context":
      case "ping":
        if (isRequest) reply(id, {});
        return;
    }
    if (isRequest) fail(id, -32601, `${str(method) || "request"} is not offered by this host`);
  };

  const onMessage = (ev) => {
    if (!frame.isConnected) {
      window.removeEventListener("message", onMessage);
      return;
    }
    if (ev.source !== frame.contentWindow) return;
    const msg = ev.data;
    if (!isObject(msg) || msg.jsonrpc !== "2.0" || typeof msg.method !== "string") return; // answers to us: none expected
    handle(msg);
  };
  window.addEventListener("message", onMessage);
  return box;
}
