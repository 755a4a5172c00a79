// content.js: MCP content (tool results, prompt messages, resource
// contents) as page nodes. Images and audio are shown only for known media
// types and well-formed base64, as data: URLs in <img> and <audio>, which
// run no script; everything else is text.
import { el, isObject, jsonText, str } from "./dom.js";

const imageTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]);
const audioTypes = new Set([
  "audio/mpeg", "audio/mp3", "audio/wav", "audio/x-wav", "audio/wave", "audio/ogg",
  "audio/webm", "audio/aac", "audio/flac", "audio/mp4",
]);
const base64RE = /^[A-Za-z0-9+/]*={0,2}$/;

// mediaType is the lower-case type/subtype of a mimeType, without
// parameters.
function mediaType(mime) {
  return str(mime).split(";")[0].trim().toLowerCase();
}

// dataURL returns a data: URL for base64 data of an allowed media type,
// else null.
function dataURL(mime, data, allowed) {
  const m = mediaType(mime);
  if (!allowed.has(m) || typeof data !== "string") return null;
  const d = data.replace(/\s+/g, "");
  if (d.length === 0 || d.length % 4 !== 0 || !base64RE.test(d)) return null;
  return `data:${m};base64,${d}`;
}

// byteSize is the decoded size of base64 data, for people.
function byteSize(data) {
  const n = Math.floor((str(data).replace(/\s+/g, "").length * 3) / 4);
  return n < 1024 ? `${n} bytes` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;
}

// media shows base64 data: an image, an audio player, or a line saying
// what it is.
function media(mime, data, what) {
  const m = mediaType(mime);
  const img = dataURL(m, data, imageTypes);
  if (img) return el("img", { class: "content-image", src: img, alt: `${what} (${m})` });
  const audio = dataURL(m, data, audioTypes);
  if (audio) return el("audio", { class: "content-audio", controls: true, src: audio });
  return el("p", { class: "muted" }, `${what}: ${m || "unknown type"}, ${byteSize(data)}, not shown`);
}

// resourceContents shows the contents of a resource (read or embedded).
export function resourceContents(contents) {
  const list = Array.isArray(contents) ? contents : [];
  if (list.length === 0) return [el("p", { class: "muted" }, "No contents.")];
  return list.map((c) => {
    if (!isObject(c)) return el("pre", { class: "content-text mono" }, jsonText(c));
    const head = el("div", { class: "content-caption muted" }, el("span", { class: "mono" }, str(c.uri)), c.mimeType ? ` (${str(c.mimeType)})` : "");
    const body = typeof c.text === "string" ? el("pre", { class: "content-text mono" }, c.text) : media(c.mimeType, c.blob, "binary content");
    return el("div", { class: "content-resource", dataset: { uri: str(c.uri) } }, head, body);
  });
}

// contentBlocks shows MCP content blocks: text, image, audio, resource
// links (with a Read button when read is given: read(uri) resolves to a
// ReadResourceResult) and embedded resources.
export function contentBlocks(blocks, read) {
  const list = Array.isArray(blocks) ? blocks : [];
  return list.map((b) => {
    if (!isObject(b)) return el("pre", { class: "content-text mono" }, jsonText(b));
    switch (b.type) {
      case "text":
        return el("pre", { class: "content-text mono" }, str(b.text));
      case "image":
        return el("div", { class: "content-media" }, media(b.mimeType, b.data, "image"));
      case "audio":
        return el("div", { class: "content-media" }, media(b.mimeType, b.data, "audio"));
      case "resource_link":
        return resourceLink(b, read);
      case "resource":
        return el(
          "div",
          { class: "content-embedded" },
          el("div", { class: "content-kind muted" }, "embedded resource"),
          ...resourceContents(isObject(b.resource) ? [b.resource] : []),
        );
      default:
        return el("pre", { class: "content-text mono" }, jsonText(b));
    }
  });
}

function resourceLink(b, read) {
  const uri = str(b.uri);
  const out = el("div", { class: "link-contents" });
  const button = read && uri
    ? el(
        "button",
        {
          type: "button",
          class: "small",
          onclick: async (ev) => {
            ev.target.disabled = true;
            out.replaceChildren(el("p", { class: "muted" }, "reading…"));
            try {
              const res = await read(uri);
              out.replaceChildren(...resourceContents(res && res.contents));
            } catch (e) {
              out.replaceChildren(el("p", { class: "error-text" }, `Error (${e.code || "network"}): ${e.message}`));
            } finally {
              ev.target.disabled = false;
            }
          },
        },
        "Read",
      )
    : null;
  return el(
    "div",
    { class: "content-link", dataset: { uri } },
    el("span", { class: "content-kind muted" }, "resource link "),
    el("strong", {}, str(b.title) || str(b.name) || uri),
    " ",
    el("span", { class: "mono muted" }, uri),
    b.mimeType ? el("span", { class: "muted" }, ` (${str(b.mimeType)})`) : null,
    " ",
    button,
    str(b.description) ? el("div", { class: "muted" }, str(b.description)) : null,
    out,
  );
}

// rawJSON is a collapsed view of a whole result as JSON.
export function rawJSON(v, label = "raw JSON") {
  let text = "";
  try {
    text = JSON.stringify(v, null, 2) ?? "";
  } catch {}
  return el("details", { class: "raw" }, el("summary", { class: "muted" }, label), el("pre", { class: "mono" }, text));
}

// toolResult shows a CallToolResult: its content, its structured content,
// and the whole result as JSON (collapsed).
export function toolResult(res, read) {
  const r = isObject(res) ? res : {};
  const nodes = [];
  if (r.isError) nodes.push(el("p", { class: "error-label" }, "The tool reported an error:"));
  nodes.push(...contentBlocks(r.content, read));
  if (r.structuredContent !== undefined && r.structuredContent !== null) nodes.push(rawJSON(r.structuredContent, "structured content"));
  nodes.push(rawJSON(res));
  return nodes;
}

// promptMessages shows a GetPromptResult: its description and messages.
export function promptMessages(res, read) {
  const r = isObject(res) ? res : {};
  const nodes = [];
  if (str(r.description)) nodes.push(el("p", { class: "muted" }, str(r.description)));
  for (const m of Array.isArray(r.messages) ? r.messages : []) {
    const msg = isObject(m) ? m : {};
    nodes.push(
      el(
        "div",
        { class: "prompt-message", dataset: { role: str(msg.role) } },
        el("div", { class: "role" }, str(msg.role) || "message"),
        ...contentBlocks([msg.content], read),
      ),
    );
  }
  nodes.push(rawJSON(res));
  return nodes;
}
