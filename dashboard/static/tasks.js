// tasks.js: the agent's tasks: tool calls that their MCP servers run as
// tasks, which the agent stores and polls until they end (across restarts
// of serve), from GET .../tasks. Like the call figures (stats.js) they are
// asked for every few seconds while the page is visible and live; a
// running task has a Cancel button (POST .../tasks/{id}/cancel), an ended
// one a Result button that fetches its result (GET .../tasks/{id}).
import { el, isObject, jsonText, str } from "./dom.js";

// EVERY_MS is how often the tasks are asked for.
const EVERY_MS = 2000;

// taskList shows the tasks in list (a <tbody>); none is shown when there
// are none, more when ended ones were left out. conn is the agent's
// connection (agent.js); servers() the [id, server] pairs, for their
// names. It returns {refresh}.
export function taskList({ conn, list, none, more, servers }) {
  let tasks = [];
  let busy = false;
  let again = false;
  const cancelling = new Set(); // ids whose cancel was asked, until they end
  const opened = new Map(); // id -> the result shown, once fetched

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
      const res = await conn.listTasks();
      tasks = isObject(res) && Array.isArray(res.tasks) ? res.tasks.filter((t) => isObject(t) && typeof t.id === "string") : [];
      more.hidden = !(isObject(res) && res.more === true);
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

  async function cancel(id, button) {
    button.disabled = true;
    cancelling.add(id);
    try {
      await conn.cancelTask(id);
    } catch (e) {
      cancelling.delete(id);
      button.disabled = false;
      button.title = `Cancel failed (${e.code || "network"}): ${e.message}`;
    }
    refresh();
  }

  async function showResult(id) {
    try {
      const t = await conn.getTask(id);
      opened.set(id, isObject(t) && t.result !== undefined ? jsonText(t.result) : str(isObject(t) ? t.error : ""));
    } catch (e) {
      opened.set(id, `(${e.code || "network"}: ${e.message})`);
    }
    render();
  }

  function render() {
    const names = new Map(servers().map(([id, s]) => [id, str(s.name)]));
    const rows = [];
    for (const t of tasks) {
      const id = t.id;
      const done = t.done === true;
      if (done) cancelling.delete(id);
      const server = str(t.serverId);
      const message = done && str(t.error) && t.status !== "completed" ? str(t.error) : str(t.statusMessage);
      const actions = el("td", { class: "actions" });
      if (!done) {
        const b = el("button", { type: "button", class: "small cancel-task", disabled: cancelling.has(id) }, cancelling.has(id) ? "Cancelling…" : "Cancel");
        b.addEventListener("click", () => cancel(id, b));
        actions.append(b);
      } else if (t.status === "completed" && !opened.has(id)) {
        const b = el("button", { type: "button", class: "small show-result" }, "Result");
        b.addEventListener("click", () => showResult(id));
        actions.append(b);
      }
      const started = Date.parse(str(t.createdAt));
      rows.push(
        el(
          "tr",
          { dataset: { taskId: id, status: str(t.status), done: done ? "yes" : "no" } },
          el("td", { class: "mono" }, str(t.tool)),
          el("td", {}, names.get(server) || server, " ", el("small", { class: "mono muted" }, str(t.taskId))),
          el("td", { class: "task-status" }, str(t.status)),
          el("td", { class: "task-message" }, message),
          el("td", { class: "muted" }, Number.isFinite(started) ? new Date(started).toLocaleTimeString() : ""),
          actions,
        ),
      );
      if (opened.has(id)) {
        rows.push(el("tr", { class: "task-result", dataset: { taskId: id } }, el("td", { colspan: "6" }, el("pre", { class: "mono" }, opened.get(id)))));
      }
    }
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
  return { refresh };
}
