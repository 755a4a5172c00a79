// dom.js: small DOM helpers for the dashboard. Text from servers is only
// ever set as text or as attribute values, never parsed as HTML.

// el builds an element: props are attributes ("class", "dataset", on*
// listeners), children are nodes or strings (text).
export function el(tag, props = {}, ...children) {
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
// uid returns an id for an element, unique on the page.
export const uid = () => "f" + ++uidSeq;

// Values from servers may be any JSON: these helpers read them without
// ever throwing (no property access on null, no string conversion of
// objects, which can throw: {"toString": 1}).

// isObject reports whether v is a JSON object (not null, not an array).
export function isObject(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// str is v when it is a string, else "".
export function str(v) {
  return typeof v === "string" ? v : "";
}

// jsonText shows any JSON value as text: strings as they are, the rest as
// JSON.
export function jsonText(v) {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

// safeURL returns u when it is an http(s) URL, else null.
export function safeURL(u) {
  try {
    const url = new URL(u);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}
