// pins.js: the agent's pinned tool definitions that need a look (the
// state's "pins": tools changed, new, rejected or removed since the agent
// pinned them), each changed field shown word by word, with accept and
// reject buttons (POST .../pins/{server}/{tool}), each decision sent with
// the name in the approvals' "Answer as" field, if any ("by", recorded in
// the audit log). Text from servers is only ever set as text, never as
// HTML.
import { el } from "./dom.js";

// wordDiff returns the words of a and b as [{op: "same"|"del"|"add", text}]
// (a longest common subsequence of whitespace-separated words; long texts
// are shown whole, deleted then added).
export function wordDiff(a, b) {
  const x = String(a).split(/(\s+)/).filter((w) => w !== "");
  const y = String(b).split(/(\s+)/).filter((w) => w !== "");
  if (x.length * y.length > 250000) {
    return [{ op: "del", text: String(a) }, { op: "add", text: String(b) }];
  }
  const n = x.length, m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  const push = (op, text) => {
    const last = out[out.length - 1];
    if (last && last.op === op) last.text += text;
    else out.push({ op, text });
  };
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { push("same", x[i]); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) push("del", x[i++]);
    else push("add", y[j++]);
  }
  while (i < n) push("del", x[i++]);
  while (j < m) push("add", y[j++]);
  return out;
}

// pinsPanel runs the section: conn is the agent's connection (agent.js),
// section the element shown when a pin needs a look, list where the pins
// go, by (if given) the "Answer as" input whose name goes with each
// decision. It returns {render(pins)}.
export function pinsPanel({ conn, section, list, by }) {
  function pinNode(p) {
    const out = el("output", { class: "muted" });
    const decide = (decision, buttons) => async () => {
      buttons.forEach((b) => (b.disabled = true));
      try {
        await conn.decidePin(p.server, p.tool, decision, by ? by.value.trim() : "");
        out.dataset.outcome = "ok";
        out.textContent = decision === "accept" ? "Accepted." : "Rejected.";
      } catch (e) {
        out.dataset.outcome = "error";
        out.textContent = e.message;
        buttons.forEach((b) => (b.disabled = false));
      }
    };
    const accept = el("button", { type: "button" }, "Accept");
    const reject = el("button", { type: "button", class: "remove" }, "Reject");
    accept.onclick = decide("accept", [accept, reject]);
    reject.onclick = decide("reject", [accept, reject]);
    const diffs = (Array.isArray(p.diff) ? p.diff : []).map((c) =>
      el(
        "div",
        { class: "pin-diff" },
        el("span", { class: "mono" }, String(c.field)),
        el("p", { class: "diff" }, ...wordDiff(c.old, c.new).map((w) =>
          w.op === "same" ? document.createTextNode(w.text) : el(w.op === "del" ? "del" : "ins", {}, w.text))),
      ),
    );
    return el(
      "div",
      { class: "pin", dataset: { state: String(p.state) } },
      el(
        "p",
        {},
        el("span", { class: "mono" }, `${p.server}/${p.tool}`),
        ` ${p.state}${p.blocked ? ", blocked" : ""}`,
      ),
      ...diffs,
      p.state === "removed" ? out : el("div", { class: "form-actions" }, accept, reject, out),
    );
  }
  return {
    render(pins) {
      const shown = Array.isArray(pins) ? pins : [];
      list.replaceChildren(...shown.map(pinNode));
      section.hidden = shown.length === 0;
    },
  };
}
