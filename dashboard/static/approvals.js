// approvals.js: the approval queue: tool calls the agent's policy asks a
// person about (action "ask"), from GET .../approvals. The agent does not
// push approvals to the state stream, so, like the tasks (tasks.js), they
// are asked for every 2 s while the page is visible and live. A pending
// one shows its server, tool, caller, times and its exact arguments (as
// text: they are what the approval runs), with Approve, Approve and
// remember (adds an allow rule for the tool) and Deny with a reason (the
// caller reads it); answered ones follow with their state, who answered
// and their result. The name typed in the "Answer as" field is sent with
// each answer ("by": a label the person states, recorded with the
// approval and in the audit log) and remembered in this browser
// (localStorage).
import { el, isObject, str } from "./dom.js";

// BY_KEY is the localStorage key of the "Answer as" name.
const BY_KEY = "agentmcp.approvals.by";

// storedName returns the remembered name, "" when none or no storage.
function storedName() {
  try {
    return localStorage.getItem(BY_KEY) || "";
  } catch {
    return "";
  }
}

// rememberName keeps name for the next visit (removed when empty).
function rememberName(name) {
  try {
    if (name) localStorage.setItem(BY_KEY, name);
    else localStorage.removeItem(BY_KEY);
  } catch {
    // No storage (a private window, say): the name lasts the page.
  }
}

// EVERY_MS is how often the approvals are asked for.
const EVERY_MS = 2000;

// RECENT is how many answered approvals are shown.
const RECENT = 20;

// pretty shows any JSON value as indented JSON text.
function pretty(v) {
  try {
    return JSON.stringify(v, null, 2) ?? "";
  } catch {
    return "";
  }
}

// when shows an RFC 3339 time as the page's local date and time.
function when(s) {
  const t = Date.parse(str(s));
  return Number.isFinite(t) ? new Date(t).toLocaleString() : "";
}

// resultText is what an approved call's CallToolResult says: its text
// parts, else the whole result as JSON.
function resultText(r) {
  if (!isObject(r)) return "";
  const parts = Array.isArray(r.content) ? r.content.filter((c) => isObject(c) && c.type === "text" && typeof c.text === "string") : [];
  const text = parts.length ? parts.map((c) => c.text).join("\n") : pretty(r);
  return r.isError === true ? "(tool error) " + text : text;
}

// approvalQueue shows the approvals: pending ones in pending (a <div>),
// answered ones in recent (a <tbody>); none is shown when there are none.
// conn is the agent's connection (agent.js); servers() the [id, server]
// pairs, for their names; onAnswered is called after a decision (the
// policy may have changed: remember); by, if given, is the "Answer as"
// <input>. It returns {refresh}.
export function approvalQueue({ conn, pending, recent, none, by, servers, onAnswered }) {
  if (by) {
    by.value = storedName();
    by.addEventListener("change", () => rememberName(by.value.trim()));
  }
  let list = [];
  let busy = false;
  let again = false;
  const nodes = new Map(); // id -> the pending approval's node, kept so a reason being typed survives
  const errors = new Map(); // id -> the last answer's error

  const live = () => conn.status === "open";
  const visible = () => document.visibilityState === "visible";

  async function refresh() {
    if (!live()) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      const res = await conn.listApprovals();
      list = Array.isArray(res) ? res.filter((a) => isObject(a) && typeof a.id === "string") : [];
    } catch {
      // Kept: the last list stays until the next answer.
    } finally {
      busy = false;
    }
    render();
    if (again) {
      again = false;
      refresh();
    }
  }

  async function answer(id, body, node) {
    for (const b of node.querySelectorAll("button")) b.disabled = true;
    errors.delete(id);
    const name = by ? by.value.trim() : "";
    if (name) body = { ...body, by: name };
    try {
      await conn.answerApproval(id, body);
      nodes.delete(id);
      if (onAnswered) onAnswered();
    } catch (e) {
      errors.set(id, `${body.decision === "deny" ? "Deny" : "Approve"} failed (${e.code || "network"}): ${e.message}`);
      for (const b of node.querySelectorAll("button")) b.disabled = false;
    }
    await refresh();
    render();
  }

  function name(id) {
    const s = servers().find(([sid]) => sid === id);
    return (s && str(s[1].name)) || id;
  }

  function pendingNode(a) {
    const reason = el("input", { type: "text", name: "reason", class: "approval-reason", placeholder: "reason (the caller reads it)", "aria-label": "reason", maxlength: "1000" });
    const node = el("div", { class: "approval", dataset: { id: a.id, state: "pending" } });
    const approve = el("button", { type: "button", class: "approve" }, "Approve");
    const remember = el("button", { type: "button", class: "approve-remember" }, "Approve and remember");
    const deny = el("button", { type: "button", class: "deny" }, "Deny");
    approve.addEventListener("click", () => answer(a.id, { decision: "approve" }, node));
    remember.addEventListener("click", () => answer(a.id, { decision: "approve", remember: true }, node));
    deny.addEventListener("click", () => answer(a.id, { decision: "deny", reason: reason.value.trim() }, node));
    node.append(
      el(
        "p",
        { class: "approval-head" },
        el("strong", { class: "mono approval-tool" }, str(a.tool)),
        " on ",
        el("span", { class: "approval-server" }, name(str(a.server))),
        " asked by ",
        el("span", { class: "mono approval-caller" }, str(a.caller)),
        el("small", { class: "muted" }, ` · requested ${when(a.requestedAt)} · expires ${when(a.expiresAt)}`),
      ),
      el("pre", { class: "mono approval-args" }, pretty(a.arguments)),
      el("div", { class: "approval-actions" }, approve, remember, reason, deny),
      el("p", { class: "approval-error error", role: "alert", hidden: true }),
    );
    return node;
  }

  function render() {
    const seen = new Set();
    const open = [];
    const done = [];
    for (const a of list) {
      if (a.state === "pending") {
        seen.add(a.id);
        if (!nodes.has(a.id)) nodes.set(a.id, pendingNode(a));
        const node = nodes.get(a.id);
        const err = node.querySelector(".approval-error");
        err.textContent = errors.get(a.id) || "";
        err.hidden = !errors.has(a.id);
        open.push(node);
      } else if (done.length < RECENT) {
        done.push(answeredRow(a));
      }
    }
    for (const id of [...nodes.keys()]) if (!seen.has(id)) nodes.delete(id);
    pending.replaceChildren(...open);
    recent.replaceChildren(...done);
    recent.closest("table").hidden = done.length === 0;
    none.hidden = open.length + done.length > 0;
  }

  function answeredRow(a) {
    let outcome = str(a.reason);
    if (a.state === "done") outcome = a.result !== undefined ? resultText(a.result) : str(a.error);
    else if (str(a.error)) outcome = str(a.error);
    return el(
      "tr",
      { dataset: { id: a.id, state: str(a.state) } },
      el("td", { class: "mono" }, str(a.tool)),
      el("td", {}, name(str(a.server))),
      el("td", { class: "mono" }, str(a.caller)),
      el("td", { class: "approval-state" }, str(a.state) + (a.remember === true ? " (remembered)" : "")),
      el("td", { class: "muted" }, when(a.decidedAt || a.requestedAt)),
      el("td", { class: "approval-by" }, str(a.decidedBy)),
      el("td", {}, el("pre", { class: "mono approval-outcome" }, outcome)),
    );
  }

  const tick = () => {
    if (visible()) refresh();
    setTimeout(tick, EVERY_MS);
  };
  setTimeout(tick, EVERY_MS);
  document.addEventListener("visibilitychange", () => {
    if (visible()) refresh();
  });
  return { refresh };
}
