// exposure.js: the agent's MCP endpoint (every agent is an MCP server at
// /agents/{class}/{name}/mcp) and the editor of its exposure rules: which
// servers and tools the endpoint exposes, from GET and PUT .../exposure.
import { el } from "./dom.js";

// exposureEditor runs the section: conn is the agent's connection
// (agent.js), endpoint the element that shows the endpoint's URL, form the
// editor (textareas "allow" and "deny", one pattern a line) and status
// where the outcome of a save is shown. It returns {load}: load reads the
// rules again (when the stream opens).
export function exposureEditor({ conn, endpoint, form, status }) {
  endpoint.replaceChildren(el("code", { class: "mono" }, conn.mcpEndpoint));
  const allow = form.elements.allow;
  const deny = form.elements.deny;
  let dirty = false; // edited since the rules were shown: a load keeps the edit
  const lines = (text) =>
    text
      .split("\n")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  const show = (rules) => {
    allow.value = (Array.isArray(rules.allow) ? rules.allow : []).join("\n");
    deny.value = (Array.isArray(rules.deny) ? rules.deny : []).join("\n");
    dirty = false;
  };
  const say = (text, state) => {
    status.textContent = text;
    status.dataset.state = state;
  };

  async function load() {
    if (dirty) return;
    try {
      show(await conn.getExposure());
      say("", "loaded");
    } catch (e) {
      say(`Cannot read the rules: ${e.message}`, "error");
    }
  }

  for (const area of [allow, deny]) area.addEventListener("input", () => (dirty = true));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    say("Saving…", "saving");
    try {
      show(await conn.setExposure({ allow: lines(allow.value), deny: lines(deny.value) }));
      say("Saved: connected MCP clients were told (list_changed).", "saved");
    } catch (e) {
      // A bad pattern: the server says which and why; nothing changed.
      say(e.message, "error");
    } finally {
      button.disabled = false;
    }
  });
  return { load };
}
