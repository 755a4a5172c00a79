// agent.js: connect to an agentmcp agent from a browser. No build step, no
// dependencies; import it as a module:
//
//   import { connectAgent } from "/static/agent.js";
//   const conn = connectAgent({
//     agent: "MyAgent",           // class; kebab-cased in the URL (my-agent)
//     name: "default",            // instance name
//     onMcpUpdate: (mcp) => { console.log(mcp.servers, mcp.tools); },
//   });
//   await conn.addMcpServer("github", "https://example.com/mcp");
//   conn.close();
//
// onMcpUpdate receives the seed's MCPServersState ({servers, tools, prompts,
// resources, resourceTemplates}) on connect and after every change. The
// connection comes back by itself after a drop (with a fresh state). In
// React:
//
//   useEffect(() => {
//     const conn = connectAgent({ agent: "MyAgent", onMcpUpdate: (mcp) => {
//       setServers(mcp.servers); setTools(mcp.tools);
//     } });
//     return () => conn.close();
//   }, []);

const FRAME_TYPE = "cf_agent_mcp_servers";
const ELICITATIONS_TYPE = "agentmcp_elicitations";

// kebab turns a class name into its URL segment, as the server does for
// OAuth callback URLs: MyAgent -> my-agent, ALLCAPS -> allcaps.
export function kebab(name) {
  if (name.toUpperCase() === name) return name.toLowerCase().replaceAll("_", "-");
  let s = name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
  s = s.replace(/^-/, "").replaceAll("_", "-");
  return s.replace(/-$/, "");
}

// errorText turns a server's error field into plain text. Errors that came
// from an authorization server are HTML-escaped (as the seed promises, so
// that pages which insert them as HTML stay safe); show the result with
// textContent, never innerHTML.
export function errorText(error) {
  if (!error) return "";
  return error
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&#34;", '"')
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
}

// AgentError is a JSON API error: code is the stable error code
// ("blocked_url", "unknown_server", ...), status the HTTP status. A
// connect_failed error also has serverName, summary (what failed, in a
// few words) and detail (the whole error).
export class AgentError extends Error {
  constructor(status, code, message, serverId, extra = {}) {
    super(message);
    this.name = "AgentError";
    this.status = status;
    this.code = code;
    this.serverId = serverId;
    this.serverName = typeof extra.serverName === "string" ? extra.serverName : "";
    this.summary = typeof extra.summary === "string" ? extra.summary : "";
    this.detail = typeof extra.detail === "string" ? extra.detail : "";
  }
}

// apiError is the AgentError of an error body's error object e.
const apiError = (status, e) =>
  new AgentError(status, (e && e.code) || "http_" + status, (e && e.message) || String(status), e && e.serverId, e || {});

// readEvents reads a stream of server-sent events (a fetch Response's
// body) and calls onEvent(name, data) for each.
async function readEvents(res, onEvent) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replaceAll("\r\n", "\n");
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, data.join("\n"));
    }
  }
}

// connectAgent opens the agent's live state stream and returns the
// connection: {mcp, status, close(), and the JSON API methods}.
//
// Options: agent (class, default "agentmcp"), name (default "default"),
// host (default this page's host), secure (wss/https; default as this page),
// prefix (default "agents"), onMcpUpdate(mcp), onStatus(status, conn) with
// status "connecting", "open", "reconnecting", "unauthorized",
// "unknown_agent" (the agent does not exist: conn.agents lists those that
// do; adding a server creates it) or "closed", onElicitations(list) with the
// servers' pending requests for the user's input (answer them with
// answerElicitation).
//
// While the status is not "open", conn.mcp is the last state received, not
// a live one: conn.downSince is when the stream went down (a Date), null
// while it is open.
export function connectAgent(options = {}) {
  const {
    agent = "agentmcp",
    name = "default",
    host = location.host,
    secure = location.protocol === "https:",
    prefix = "agents",
    onMcpUpdate = () => {},
    onStatus = () => {},
    onElicitations = () => {},
  } = options;
  const path = `/${prefix}/${encodeURIComponent(kebab(agent))}/${encodeURIComponent(name)}`;
  const httpBase = `${secure ? "https" : "http"}://${host}${path}`;
  const wsURL = `${secure ? "wss" : "ws"}://${host}${path}`;

  let ws = null;
  let closed = false;
  let retry = 0;
  let timer = null;
  const conn = { mcp: null, elicitations: [], status: "connecting", url: httpBase, downSince: null, agents: [] };

  const setStatus = (s) => {
    if (s === "open") conn.downSince = null;
    else if (!conn.downSince) conn.downSince = new Date();
    if (conn.status === s) return;
    conn.status = s;
    onStatus(s, conn);
  };

  const open = () => {
    if (closed) return;
    ws = new WebSocket(wsURL);
    ws.addEventListener("open", () => {
      retry = 0;
      setStatus("open");
      // Only pending elicitations are sent on connect: forget old ones.
      if (conn.elicitations.length) {
        conn.elicitations = [];
        onElicitations([]);
      }
    });
    ws.addEventListener("message", (ev) => {
      let frame;
      try {
        frame = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (frame && frame.type === FRAME_TYPE) {
        conn.mcp = frame.mcp;
        onMcpUpdate(frame.mcp);
      } else if (frame && frame.type === ELICITATIONS_TYPE) {
        conn.elicitations = frame.elicitations || [];
        onElicitations(conn.elicitations);
      }
    });
    ws.addEventListener("close", async () => {
      ws = null;
      if (closed) return;
      // The handshake status is not visible to scripts: ask the API why.
      let why = "reconnecting";
      try {
        const res = await fetch(httpBase + "/servers", { credentials: "include" });
        if (res.status === 401) why = "unauthorized";
        if (res.status === 404) {
          const body = await res.json().catch(() => null);
          const e = (body && body.error) || {};
          if (e.code === "unknown_agent") {
            why = "unknown_agent";
            conn.agents = Array.isArray(e.agents) ? e.agents.filter((a) => typeof a === "string") : [];
          }
        }
      } catch {}
      if (closed) return;
      setStatus(why);
      const delay = Math.min(8000, 500 * 2 ** retry) * (0.5 + Math.random() / 2);
      retry = Math.min(retry + 1, 4);
      timer = setTimeout(open, delay);
    });
  };

  const api = async (method, sub, body, signal) => {
    const init = { method, credentials: "include", headers: {}, signal };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(httpBase + sub, init);
    if (res.status === 204) return null;
    let data = null;
    try {
      data = await res.json();
    } catch {}
    if (!res.ok) {
      const e = (data && data.error) || {};
      throw apiError(res.status, { ...e, message: e.message || res.statusText });
    }
    return data;
  };
  // callStreamed makes a tool call that asks for its events (Accept:
  // text/event-stream), calling onProgress({progress, total, message})
  // for each progress notification; a server that answers with JSON
  // alone (no events) is read as api() does.
  const callStreamed = async (sub, body, signal, onProgress) => {
    const res = await fetch(httpBase + sub, {
      method: "POST",
      credentials: "include",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream, application/json" },
      body: JSON.stringify(body),
      signal,
    });
    if (!(res.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
      let data = null;
      try {
        data = await res.json();
      } catch {}
      if (!res.ok) throw apiError(res.status, { ...((data && data.error) || {}), message: (data && data.error && data.error.message) || res.statusText });
      return data;
    }
    let outcome = null;
    // A call that became a task is the agent's once the task exists:
    // aborting the call cancels its task too.
    let taskId = null;
    const cancelTask = () => {
      if (taskId !== null) api("POST", `/tasks/${encodeURIComponent(taskId)}/cancel`).catch(() => {});
    };
    if (signal) signal.addEventListener("abort", cancelTask, { once: true });
    try {
      await readEvents(res, (name, text) => {
        let ev;
        try {
          ev = JSON.parse(text);
        } catch {
          return;
        }
        if (!ev || typeof ev !== "object") return;
        if (name === "task" && ev.task && typeof ev.task.id === "string") taskId = ev.task.id;
        else if (name === "progress") onProgress(ev);
        else if (name === "result") outcome = { result: ev.result };
        else if (name === "error") outcome = { error: apiError(ev.status || 502, ev.error) };
        else if (name === "task_running" && ev.task && typeof ev.task.id === "string")
          // The call's time ran out; its task runs on (listTasks).
          outcome = { error: new AgentError(202, "task_running", `the call runs on as task ${ev.task.id}: see Tasks`) };
      });
    } finally {
      if (signal) signal.removeEventListener("abort", cancelTask);
    }
    if (!outcome) throw new AgentError(502, "network", "the call's stream ended without its result");
    if (outcome.error) throw outcome.error;
    return outcome.result;
  };
  const query = (filter = {}) => {
    const q = new URLSearchParams();
    for (const key of ["serverId", "serverName", "state"]) {
      const v = filter[key];
      for (const x of Array.isArray(v) ? v : v ? [v] : []) q.append(key, x);
    }
    const s = q.toString();
    return s ? "?" + s : "";
  };
  const seg = encodeURIComponent;

  Object.assign(conn, {
    close() {
      closed = true;
      clearTimeout(timer);
      if (ws) ws.close(1000);
      setStatus("closed");
    },
    // reconnectNow opens the stream at once when it is down (after the
    // agent was created, say), instead of at the next retry.
    reconnectNow() {
      if (closed || ws) return;
      clearTimeout(timer);
      retry = 0;
      open();
    },
    // getMcpServers returns the current MCPServersState.
    getMcpServers: () => api("GET", ""),
    // addMcpServer adds a server: options {id, transport: {type, headers},
    // callbackHost, callbackPath, agentsPrefix, client, retry}. It resolves
    // to {id, state, authUrl?}.
    addMcpServer: (serverName, url, opts = {}) => api("POST", "/servers", { name: serverName, url, ...opts }),
    removeMcpServer: (id) => api("DELETE", `/servers/${seg(id)}`),
    // reconnectMcpServer connects a failed or not-connected server again
    // now. It resolves to {id, state, authUrl?}.
    reconnectMcpServer: (id) => api("POST", `/servers/${seg(id)}/reconnect`),
    listTools: async (filter) => (await api("GET", "/tools" + query(filter))).tools,
    // searchTools resolves to the tools that match q, best first, each
    // with its key and score (GET .../tools?q=); options: limit, and the
    // filters of listTools.
    searchTools: async (q, { limit, ...filter } = {}) => {
      const p = new URLSearchParams(query(filter).slice(1));
      p.set("q", q);
      if (limit) p.set("limit", String(limit));
      return (await api("GET", "/tools?" + p.toString())).tools;
    },
    listPrompts: async (filter) => (await api("GET", "/prompts" + query(filter))).prompts,
    listResources: async (filter) => (await api("GET", "/resources" + query(filter))).resources,
    listResourceTemplates: async (filter) => (await api("GET", "/resource-templates" + query(filter))).resourceTemplates,
    // callTool resolves to the CallToolResult (a tool failure has isError).
    // Options: signal (an AbortSignal: aborting it cancels the call on the
    // MCP server), timeoutMs (the server's limit for this call; default
    // the server's, 2 minutes unless configured), onProgress (called with
    // each of the server's progress notifications, {progress, total?,
    // message?}: the call then asks for its events).
    callTool: (serverId, toolName, args = {}, { signal, timeoutMs, onProgress } = {}) =>
      onProgress
        ? callStreamed(`/servers/${seg(serverId)}/tools/call`, { name: toolName, arguments: args, timeoutMs }, signal, onProgress)
        : api("POST", `/servers/${seg(serverId)}/tools/call`, { name: toolName, arguments: args, timeoutMs }, signal),
    readResource: (serverId, uri, { signal, timeoutMs } = {}) =>
      api("POST", `/servers/${seg(serverId)}/resources/read`, { uri, timeoutMs }, signal),
    getPrompt: (serverId, promptName, args = {}, { signal, timeoutMs } = {}) =>
      api("POST", `/servers/${seg(serverId)}/prompts/get`, { name: promptName, arguments: args, timeoutMs }, signal),
    listElicitations: async () => (await api("GET", "/elicitations")).elicitations,
    // getStats resolves to the figures of each server's tool calls over
    // the last minutes: {windowSeconds, servers: {id: {calls, errors,
    // errorRate, p50Ms, p95Ms, totalCalls, totalErrors}}}.
    getStats: () => api("GET", "/stats"),
    // getBusy resolves to what keeps the agent awake, without waking it:
    // {awake, inUse?, work?, watchers?, elicitations?, authorizing?,
    // questions?, keepAwake?, reason}.
    getBusy: () => api("GET", "/busy"),
    // getServerLogs resolves to a server's last log messages
    // (notifications/message): {serverId, logs: [{time, level, logger?, data}]}.
    getServerLogs: (id) => api("GET", `/servers/${seg(id)}/logs`),
    // getLogs resolves to every server's last log messages
    // ({servers: [{serverId, logs}]}).
    getLogs: () => api("GET", "/logs"),
    // listTasks resolves to the agent's tasks (tool calls its servers run
    // as MCP tasks): {tasks: [{id, serverId, taskId, tool, status,
    // statusMessage?, done, error?, createdAt, updatedAt}], more?};
    // getTask to one, with its result once completed; cancelTask asks its
    // server to cancel it. A task's id is "serverId:taskId".
    listTasks: () => api("GET", "/tasks"),
    getTask: (id) => api("GET", `/tasks/${seg(id)}`),
    cancelTask: (id) => api("POST", `/tasks/${seg(id)}/cancel`),
    // mcpEndpoint is the URL of the agent's MCP endpoint (the agent as an
    // MCP server); getExposure and setExposure read and replace the rules
    // of what it exposes, {allow: [pattern], deny: [pattern]}.
    mcpEndpoint: httpBase + "/mcp",
    getExposure: () => api("GET", "/exposure"),
    setExposure: (rules) => api("PUT", "/exposure", rules),
    // decidePin accepts or rejects a tool's changed (or new) definition:
    // decision is "accept" or "reject"; by, if given, names who decides
    // (recorded in the audit log).
    decidePin: (serverId, tool, decision, by) =>
      api("POST", `/pins/${seg(serverId)}/${seg(tool)}`, by ? { decision, by } : { decision }),
    // getPolicy and setPolicy read and replace the agent's tool policy,
    // {default, rules: [{match, action, rate?}]} (a bad one rejects with
    // the server's 400 naming the rule); getPolicyPreset resolves to a
    // preset ("open", "cautious") as a policy to set; policyTools to each
    // tool's effective action per caller: [{serverId, name, decisions:
    // {llm|api|gateway: {action, rule, rate?, reason?}}}].
    getPolicy: () => api("GET", "/policy"),
    setPolicy: (p) => api("PUT", "/policy", p),
    getPolicyPreset: (name) => api("GET", `/policy/presets/${seg(name)}`),
    policyTools: async () => (await api("GET", "/policy/tools")).tools,
    // listApprovals resolves to the calls the policy asked about, pending
    // first: [{id, server, tool, arguments, caller, state, requestedAt,
    // expiresAt, decidedAt?, decidedBy?, reason?, result?, error?}];
    // answerApproval answers one: {decision: "approve"|"deny", remember?,
    // reason?, by?}.
    listApprovals: async () => (await api("GET", "/approvals")).approvals,
    answerApproval: (id, answer) => api("POST", `/approvals/${seg(id)}`, answer),
    // getAudit resolves to a page of the agent's audit log for q (a
    // URLSearchParams: server, tool, decision, since, until, limit,
    // cursor, order): {records, cursor, more}; auditExportURL is the URL
    // of every record q selects as JSON lines (audit.js).
    getAudit: (q) => api("GET", "/audit?" + q.toString()),
    auditExportURL: (q) => {
      const p = new URLSearchParams(q);
      p.set("format", "jsonl");
      return httpBase + "/audit?" + p.toString();
    },
    // listAgents resolves to the agents of the server: [{class, name}].
    listAgents: async () => {
      const res = await fetch(`${secure ? "https" : "http"}://${host}/${prefix}`, { credentials: "include" });
      if (!res.ok) throw new AgentError(res.status, "http_" + res.status, res.statusText);
      const data = await res.json();
      return Array.isArray(data && data.agents) ? data.agents : [];
    },
    // answerElicitation answers a server's request for input: action
    // "accept" (with the form's content), "decline" or "cancel".
    answerElicitation: (id, action, content) =>
      api("POST", `/elicitations/${seg(id)}`, content === undefined ? { action } : { action, content }),
  });
  open();
  return conn;
}
