// forms.js: forms generated from JSON schemas (tool inputs, elicitation
// requests). A schema comes from a server and may be any JSON value: every
// reader here takes anything without throwing.
import { el, isObject, jsonText, str, uid } from "./dom.js";

// maxDepth bounds nested objects and arrays; deeper values are JSON fields.
const maxDepth = 5;

// fieldType is the JSON type a property's input collects, "" when the
// property does not say (or is not a schema object).
function fieldType(p) {
  if (!isObject(p)) return "";
  const t = Array.isArray(p.type) ? p.type.find((x) => typeof x === "string" && x !== "null") : p.type;
  if (typeof t === "string" && t !== "") return t;
  if (isObject(p.properties)) return "object";
  return isObject(p.items) ? "array" : "";
}

// choices returns the options of an enumerated schema as [{value, label}]:
// enum (labelled by enumNames when there are), or oneOf/anyOf whose every
// alternative is a const (labelled by its title). Else null.
export function choices(p) {
  if (!isObject(p)) return null;
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    return p.enum.map((v, i) => ({ value: v, label: str(names[i]) || jsonText(v) }));
  }
  for (const key of ["oneOf", "anyOf"]) {
    const alts = p[key];
    if (Array.isArray(alts) && alts.length > 0 && alts.every((a) => isObject(a) && Object.hasOwn(a, "const"))) {
      return alts.map((a) => ({ value: a.const, label: str(a.title) || jsonText(a.const) }));
    }
  }
  return null;
}

// valueKey is the option value of an enumerated value.
const valueKey = (v) => jsonText(JSON.stringify(v) ?? "null");

// put sets obj[name] as an own property, even for names like "__proto__"
// that a plain assignment would not.
function put(obj, name, value) {
  Object.defineProperty(obj, name, { value, enumerable: true, writable: true, configurable: true });
}

// labelNode is the label of a field: its name, a required mark, its type
// and its description.
function labelNode(forId, name, p, req) {
  const type = fieldType(p);
  const desc = isObject(p) ? str(p.description) || str(p.title) : "";
  return el(
    "label",
    { for: forId },
    el("span", { class: "mono" }, name),
    req ? el("span", { class: "req", title: "required" }, " *") : null,
    type ? el("span", { class: "muted" }, ` ${type}`) : null,
    desc ? el("small", { class: "muted" }, " — " + desc) : null,
  );
}

// field builds the control of one value: {control, read, id}. read returns
// the value, or undefined when it is left out; it throws an Error naming
// the field for input it cannot take. initial is the starting value (the
// schema's default unless given).
function field(raw, name, req, initial, depth) {
  const p = isObject(raw) ? raw : {};
  const start = initial !== undefined ? initial : p.default;
  const id = uid();
  const type = fieldType(p);
  const opts = choices(p);
  if (opts) {
    const select = el(
      "select",
      { id, name, required: req },
      req && start !== undefined ? null : el("option", { value: "" }, ""),
      ...opts.map((o) => el("option", { value: valueKey(o.value), selected: start !== undefined && valueKey(o.value) === valueKey(start) }, o.label)),
    );
    return {
      id,
      control: select,
      read() {
        if (select.value === "") return undefined;
        const o = opts.find((x) => valueKey(x.value) === select.value);
        return o ? o.value : undefined;
      },
    };
  }
  if (type === "boolean") {
    const input = el("input", { id, name, type: "checkbox", checked: start === true });
    const hasDefault = start !== undefined;
    return { id, control: input, read: () => (input.checked || req || hasDefault ? input.checked : undefined) };
  }
  if (type === "integer" || type === "number") {
    const input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", required: req });
    if (typeof start === "number") input.value = String(start);
    return {
      id,
      control: input,
      read() {
        if (input.value === "") return undefined;
        const n = Number(input.value);
        if (!Number.isFinite(n)) throw new Error(`${name}: not a number`);
        return n;
      },
    };
  }
  if (type === "string") {
    const input = el("input", { id, name, type: "text", required: req });
    if (typeof start === "string") input.value = start;
    return { id, control: input, read: () => (input.value !== "" || req ? input.value : undefined) };
  }
  if (type === "object" && isObject(p.properties) && depth < maxDepth) {
    const inner = objectFields(p, isObject(start) ? start : undefined, depth + 1);
    const box = el("fieldset", { id, class: "object-field", dataset: { name } }, ...inner.nodes);
    if (inner.nodes.length === 0) box.append(el("span", { class: "muted" }, "no properties"));
    return {
      id,
      control: box,
      read() {
        const v = inner.collect();
        return Object.keys(v).length > 0 || req ? v : undefined;
      },
    };
  }
  if (type === "array" && depth < maxDepth) return arrayField(p, name, req, start, id, depth);
  const area = el("textarea", { id, name, rows: 2, placeholder: type ? `JSON ${type}` : "JSON" });
  if (start !== undefined) area.value = JSON.stringify(start, null, 1) ?? "";
  return {
    id,
    control: area,
    read() {
      if (area.value.trim() === "") return undefined;
      try {
        return JSON.parse(area.value);
      } catch (e) {
        throw new Error(`${name}: invalid JSON (${e.message})`);
      }
    },
  };
}

// arrayField is the control of an array: a checkbox per option when the
// items are enumerated, else a list of item controls with Add and Remove.
function arrayField(p, name, req, start, id, depth) {
  const items = isObject(p.items) ? p.items : {};
  const initial = Array.isArray(start) ? start : [];
  const opts = choices(items);
  if (opts) {
    const chosen = new Set(initial.map(valueKey));
    const boxes = opts.map((o) => {
      const cb = el("input", { type: "checkbox", name: `${name}[]`, value: valueKey(o.value), checked: chosen.has(valueKey(o.value)) });
      return { o, cb, node: el("label", { class: "choice" }, cb, " ", o.label) };
    });
    return {
      id,
      control: el("div", { id, class: "array-field", dataset: { name } }, ...boxes.map((b) => b.node)),
      read() {
        const v = boxes.filter((b) => b.cb.checked).map((b) => b.o.value);
        return v.length > 0 || req ? v : undefined;
      },
    };
  }
  const list = el("ol", { class: "array-items" });
  const rows = [];
  const add = (value) => {
    const f = field(items, `${name}[]`, true, value, depth + 1);
    const row = el("li", { class: "array-item" }, f.control);
    const entry = { f, row };
    row.append(
      el(
        "button",
        {
          type: "button",
          class: "small remove",
          title: "Remove this item",
          onclick: () => {
            rows.splice(rows.indexOf(entry), 1);
            row.remove();
          },
        },
        "Remove",
      ),
    );
    rows.push(entry);
    list.append(row);
  };
  initial.forEach(add);
  const addButton = el("button", { type: "button", class: "small add-item", onclick: () => add(undefined) }, "Add item");
  return {
    id,
    control: el("div", { id, class: "array-field", dataset: { name } }, list, addButton),
    read() {
      const v = [];
      for (const r of rows) {
        const x = r.f.read();
        if (x !== undefined) v.push(x);
      }
      return v.length > 0 || req ? v : undefined;
    },
  };
}

// objectFields builds a label and a control per property of an object
// schema. Properties that are not an object mean none; a required that is
// not an array of strings is ignored.
function objectFields(schema, initial, depth) {
  const props = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const required = new Set(
    isObject(schema) && Array.isArray(schema.required) ? schema.required.filter((x) => typeof x === "string") : [],
  );
  const fields = [];
  const nodes = [];
  for (const [name, raw] of Object.entries(props)) {
    const req = required.has(name);
    const start = initial && Object.hasOwn(initial, name) ? initial[name] : undefined;
    const f = field(raw, name, req, start, depth);
    fields.push({ name, f });
    nodes.push(labelNode(f.id, name, raw, req), f.control);
  }
  return {
    nodes,
    collect() {
      const out = {};
      for (const { name, f } of fields) {
        const v = f.read();
        if (v !== undefined) put(out, name, v);
      }
      return out;
    },
  };
}

// schemaForm builds the fields of an object schema: text, number and
// checkbox inputs for scalars (with the schema's defaults), a select for
// enumerations (with their titles), nested fieldsets for objects, item
// lists for arrays, and a JSON text area for the rest. It returns the
// label and control nodes and collect(), which reads the value (throwing
// an Error that names the field for bad input).
export function schemaForm(schema) {
  return objectFields(schema, undefined, 0);
}
