// busy.js: the dashboard's line on what keeps the agent awake, from
// GET .../busy (what POST .../hibernate's 409 agent_busy names): requests
// and calls in flight, open streams (this page's own among them),
// pending elicitations, an OAuth sign-in, MCP clients' unanswered
// questions, or a keep-awake mark. It is asked for every few seconds
// while the page is visible and live, and after each state change.
import { isObject } from "./dom.js";

// EVERY_MS is how often the line is asked for.
const EVERY_MS = 5000;

// awakeLine keeps line (an element) saying what keeps the agent of conn
// (agent.js) awake. It returns {refresh}.
export function awakeLine({ conn, line }) {
  let busy = false;
  const live = () => conn.status === "open";
  const visible = () => document.visibilityState === "visible";

  async function refresh() {
    if (!live() || busy) return;
    busy = true;
    let st = null;
    try {
      st = await conn.getBusy();
    } catch {
      // Kept: the last line stays until the next answer.
    } finally {
      busy = false;
    }
    if (isObject(st)) show(st);
  }

  function show(st) {
    const reason = typeof st.reason === "string" ? st.reason : "";
    let text;
    if (!st.awake) {
      line.dataset.awake = "asleep";
      text = "Asleep: the next request wakes it.";
    } else if (reason === "idle") {
      line.dataset.awake = "idle";
      text = "Awake and idle: it hibernates after its idle timeout.";
    } else {
      line.dataset.awake = "busy";
      text = "Kept awake by: " + reason;
      if (typeof st.watchers === "number" && st.watchers > 0) text += " (this page's stream among them)";
      text += ".";
    }
    line.textContent = text;
    line.hidden = false;
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
