// audit.js: the agent's audit log (GET .../audit): its tool calls, the
// decisions on them (the policy's, people's on approvals), pin decisions
// and servers added or removed, newest first, filtered by server, tool,
// decision and time. Like the call figures (stats.js), it is asked for
// every few seconds while the page is visible and live, and at once when
// a filter changes; the export link gives every record the filters
// select as JSON lines. Text from servers is only ever set as text.
import { el, isObject, str } from "./dom.js";

// EVERY_MS is how often the log is asked for.
const EVERY_MS = 5000;

// SHOWN is how many records are shown.
const SHOWN = 100;

// DECISIONS are the decisions a record may have, for the filter.
export const DECISIONS = [
  "allowed", "denied", "rate_limited", "tool_changed", "asked", "approved", "rejected", "expired",
  "pin_accepted", "pin_rejected", "pin_changed", "pin_new", "pin_removed", "server_added", "server_removed",
];

// auditQuery returns the API's query of the form's filters (a
// URLSearchParams): server, tool, decision and since (a datetime-local
// value, the browser's time zone).
export function auditQuery(form) {
  const q = new URLSearchParams();
  for (const k of ["server", "tool", "decision"]) {
    const v = form.elements[k].value.trim();
    if (v) q.set(k, v);
  }
  const since = form.elements.since.value;
  if (since) {
    const t = new Date(since);
    if (!Number.isNaN(t.getTime())) q.set("since", t.toISOString());
  }
  return q;
}

// auditLog runs the section: conn is the agent's connection (agent.js),
// form the filters, list the table's body, none the "no records" line,
// exportLink the JSON lines link. It returns {refresh}.
export function auditLog({ conn, form, list, none, exportLink, status }) {
  let busy = false;
  let again = false;

  const live = () => conn.status === "open";
  const visible = () => document.visibilityState === "visible";

  function row(r) {
    const target = str(r.server) + (str(r.tool) ? "/" + str(r.tool) : "");
    const outcome = str(r.outcome) + (str(r.errorClass) ? ` (${str(r.errorClass)})` : "");
    const t = Date.parse(str(r.time));
    return el(
      "tr",
      { dataset: { decision: str(r.decision), seq: String(typeof r.seq === "number" ? r.seq : "") } },
      el("td", { class: "muted" }, t ? new Date(t).toLocaleString() : ""),
      el("td", { class: "decision" }, str(r.decision)),
      el("td", { class: "mono" }, target, str(r.serverName) && str(r.serverName) !== str(r.server) ? el("small", { class: "muted" }, " " + str(r.serverName)) : null),
      el("td", {}, str(r.caller)),
      el("td", { class: "decided-by" }, str(r.decidedBy)),
      el("td", { class: "outcome" }, outcome),
      el("td", { class: "num" }, typeof r.durationMs === "number" ? r.durationMs.toFixed(1) : ""),
      el("td", { class: "mono muted" }, str(r.approval)),
      el("td", {}, str(r.reason)),
      el("td", { class: "mono muted", title: str(r.argumentsHash) }, str(r.argumentsHash).slice(0, 12)),
    );
  }

  async function refresh() {
    if (!live()) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    const q = auditQuery(form);
    exportLink.href = conn.auditExportURL(q);
    try {
      q.set("order", "newest");
      q.set("limit", String(SHOWN));
      const res = await conn.getAudit(q);
      const recs = isObject(res) && Array.isArray(res.records) ? res.records.filter(isObject) : [];
      list.replaceChildren(...recs.map(row));
      none.hidden = recs.length > 0;
      status.textContent = "";
    } catch (e) {
      status.textContent = e && e.message ? e.message : String(e);
    } finally {
      busy = false;
    }
    if (again) {
      again = false;
      refresh();
    }
  }

  form.elements.decision.replaceChildren(
    el("option", { value: "" }, "any decision"),
    ...DECISIONS.map((d) => el("option", { value: d }, d)),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    refresh();
  });
  form.addEventListener("change", () => refresh());
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
