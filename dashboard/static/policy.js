// policy.js: the agent's tool policy (GET and PUT .../policy): its
// default action and ordered rules, shown as a list and edited as JSON or
// started from a preset (GET .../policy/presets/{name}); a refused policy
// shows the server's 400, which names the rule and field. Each tool in the
// tool list gets its effective action (GET .../policy/tools) per caller,
// with the rule that decided.
import { el, isObject, str } from "./dom.js";

const CALLERS = ["llm", "api", "gateway"];

// decisionText is one decision in words: "ask · rule 1", "allow ·
// default", with the rate and the reason when there are.
function decisionText(d) {
  let s = str(d.action) + " · " + (typeof d.rule === "number" && d.rule >= 0 ? `rule ${d.rule}` : "default");
  if (str(d.rate)) s += ` · ${d.rate}`;
  if (str(d.reason)) s += ` (${d.reason})`;
  return s;
}

// matchText is a rule's match in words.
function matchText(m) {
  if (!isObject(m)) return "every call";
  const parts = [];
  for (const k of ["servers", "tools", "callers"]) if (Array.isArray(m[k]) && m[k].length) parts.push(`${k}: ${m[k].filter((x) => typeof x === "string").join(", ")}`);
  if (isObject(m.annotations)) {
    for (const [k, v] of Object.entries(m.annotations)) if (typeof v === "boolean") parts.push(`${k}: ${v}`);
  }
  return parts.length ? parts.join("; ") : "every call";
}

// policyEditor runs the section: summary shows the policy in force, form
// the editor (select "preset", textarea "policy"), status the outcome of
// a load or save; tools() is the element holding the tool list, whose
// details.tool nodes get their effective action, and denied the line
// under it that names the tools the policy denies to the API (which the
// list, the API's, leaves out). It returns {load,
// decorate, refreshTools, toolsShown}: load reads the policy again (when
// the stream opens), decorate marks the tool list from the last answer,
// refreshTools asks for the effective actions again, toolsShown does so
// soon, once for a burst of calls.
export function policyEditor({ conn, summary, form, status, tools, denied }) {
  const area = form.elements.policy;
  const preset = form.elements.preset;
  let dirty = false; // edited since the policy was shown: a load keeps the edit
  let decisions = new Map(); // serverId \0 tool -> {llm, api, gateway}
  let asking = false;
  let again = false;

  const say = (text, state) => {
    status.textContent = text;
    status.dataset.state = state;
  };

  function show(p) {
    const rules = isObject(p) && Array.isArray(p.rules) ? p.rules.filter(isObject) : [];
    const def = (isObject(p) && str(p.default)) || "allow";
    const items = rules.map((r, i) =>
      el(
        "li",
        { dataset: { rule: String(i), action: str(r.action) } },
        el("span", { class: "muted" }, `rule ${i}: `),
        matchText(r.match),
        " → ",
        el("strong", { class: "policy-action", dataset: { action: str(r.action) } }, str(r.action)),
        str(r.rate) ? ` (at most ${r.rate})` : "",
      ),
    );
    summary.replaceChildren(
      el("p", { class: "policy-default" }, "Default: ", el("strong", { class: "policy-action", dataset: { action: def } }, def), rules.length ? " when no rule matches; the first rule that matches decides:" : " (no rules)."),
      rules.length ? el("ol", { class: "policy-rules" }, ...items) : "",
    );
    if (!dirty) area.value = JSON.stringify(isObject(p) ? p : {}, null, 2);
  }

  async function load() {
    try {
      const p = await conn.getPolicy();
      show(p);
      if (!dirty) say("", "loaded");
    } catch (e) {
      say(`Cannot read the policy: ${e.message}`, "error");
    }
    refreshTools();
  }

  async function refreshTools() {
    if (asking) {
      again = true; // the answer in flight may predate a change
      return;
    }
    asking = true;
    try {
      const list = await conn.policyTools();
      decisions = new Map((Array.isArray(list) ? list : []).filter((t) => isObject(t) && isObject(t.decisions)).map((t) => [str(t.serverId) + "\u0000" + str(t.name), t.decisions]));
    } catch {
      // Kept: the last answer stays.
    } finally {
      asking = false;
    }
    decorate();
    if (again) {
      again = false;
      refreshTools();
    }
  }

  // toolsShown asks for the effective actions again soon (once for a
  // burst of renders): the tool list may have changed.
  let soon = null;
  function toolsShown() {
    if (soon !== null) return;
    soon = setTimeout(() => {
      soon = null;
      refreshTools();
    }, 300);
  }

  // mark is a tool's effective action: one when every caller gets the
  // same, else one per caller.
  function mark(d) {
    const per = CALLERS.filter((c) => isObject(d[c])).map((c) => [c, d[c]]);
    if (!per.length) return null;
    const same = per.every(([, x]) => decisionText(x) === decisionText(per[0][1]));
    const m = el("span", { class: "policy-mark", dataset: { action: str(per[0][1].action) }, title: per.map(([c, x]) => `${c}: ${decisionText(x)}`).join("\n") });
    if (same) m.append(el("span", { class: "policy-action", dataset: { action: str(per[0][1].action) } }, decisionText(per[0][1])));
    else for (const [c, x] of per) m.append(el("span", { class: "policy-action", dataset: { action: str(x.action), caller: c } }, `${c}: ${decisionText(x)}`));
    return m;
  }

  // decorate gives each tool of the list its mark, and names under the
  // list those the policy denies to the API.
  function decorate() {
    const shown = new Set();
    for (const node of tools().querySelectorAll("details.tool")) {
      const sum = node.querySelector(":scope > summary");
      if (!sum) continue;
      const old = sum.querySelector(".policy-mark");
      if (old) old.remove();
      const key = (node.dataset.serverId || "") + "\u0000" + (node.dataset.tool || "");
      shown.add(key);
      const d = decisions.get(key);
      const m = isObject(d) ? mark(d) : null;
      if (m) sum.append(" ", m);
    }
    const hidden = [];
    for (const [key, d] of decisions) {
      if (shown.has(key) || !isObject(d.api) || d.api.action !== "deny") continue;
      const [serverId, name] = key.split("\u0000");
      const m = mark(d);
      hidden.push(el("span", { class: "denied-tool", dataset: { serverId, tool: name } }, el("span", { class: "mono" }, `${serverId}/${name}`), " ", m));
    }
    denied.replaceChildren(...(hidden.length ? ["Not listed, denied to the API by the policy: ", ...hidden.flatMap((n, i) => (i ? ["; ", n] : [n]))] : []));
    denied.hidden = hidden.length === 0;
  }

  area.addEventListener("input", () => (dirty = true));
  preset.addEventListener("change", async () => {
    const name = preset.value;
    if (!name) return;
    try {
      area.value = JSON.stringify(await conn.getPolicyPreset(name), null, 2);
      dirty = true;
      say(`The ${name} preset: Save to put it in force.`, "edited");
    } catch (e) {
      say(`Cannot read the preset: ${e.message}`, "error");
    }
    preset.value = "";
  });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const button = form.querySelector("button[type=submit]");
    let doc;
    try {
      doc = JSON.parse(area.value);
    } catch (e) {
      say(`Not JSON: ${e.message}`, "error");
      return;
    }
    button.disabled = true;
    say("Saving…", "saving");
    try {
      const p = await conn.setPolicy(doc);
      dirty = false;
      show(p);
      say("Saved: the policy is in force.", "saved");
      refreshTools();
    } catch (e) {
      // A bad rule: the server says which and why; nothing changed.
      say(e.message, "error");
    } finally {
      button.disabled = false;
    }
  });
  return { load, decorate, refreshTools, toolsShown };
}
