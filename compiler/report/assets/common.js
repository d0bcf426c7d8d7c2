"use strict";
// apc report: helpers shared by the explain and bench pages. Every text from the data is
// set as text (textContent, SVG <title>, attributes), never parsed as HTML.
const DATA = JSON.parse(document.getElementById("apc-data").textContent);
const SVG_NS = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = String(v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svgEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") node.textContent = String(v);
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c) node.append(c);
  return node;
}

function tip(node, text) {
  node.append(svgEl("title", { text: text }));
  return node;
}

// Python's format(x, f".{d}f"): x's exact decimal value rounded, a tie to the even digit
// (JavaScript's toFixed rounds a tie up), so the page prints the text report's figures
function pyFixed(x, d) {
  const exact = Math.abs(x).toFixed(100);  // every digit of the double (|x| < 1e21)
  const [ip, fp] = exact.split(".");
  const keep = fp.slice(0, d), rest = fp.slice(d);
  const last = Number((ip + keep).slice(-1));
  const tie = rest[0] === "5" && /^0*$/.test(rest.slice(1));
  const up = rest[0] > "5" || (rest[0] === "5" && (!tie || last % 2 === 1));
  let digits = ip + keep;
  if (up) digits = (BigInt(digits) + 1n).toString().padStart(digits.length, "0");
  const whole = d ? digits.slice(0, -d) || "0" : digits;
  const sign = x < 0 && /[1-9]/.test(digits) ? "-" : "";
  return sign + whole + (d ? "." + digits.slice(-d) : "");
}
function fmt(n) {  // Python's f"{round(n):,}"
  if (n === null || n === undefined) return "-";
  return pyFixed(n, 0).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
function pct(x) {  // Python's f"{x:.1%}"
  return x === null || x === undefined ? "-" : pyFixed(x * 100, 1) + "%";
}
function ms(x) {  // Python's f"{x:.1f}"
  return x === null || x === undefined ? "-" : pyFixed(x, 1);
}

// one colour per budget category (and per component kind, for components in no category)
const COLOURS = {
  history: "#4e79a7", summary: "#a0cbe8", worldInfo: "#f28e2b", authorsNote: "#ffbe7d",
  charactersNote: "#8cd17d", persona: "#b6992d", injection: "#f1ce63", workspaceFile: "#59a14f",
  toolResult: "#e15759", skill: "#b07aa1", overhead: "#bab0ac",
  SystemInstruction: "#79706e", PresetGuide: "#d4a6c8", CharacterCard: "#d37295",
  UserProfile: "#9d7660", Plan: "#499894", DiffSummary: "#86bcb6", ToolDefinitions: "#fabfd2",
  WorkspaceTree: "#59a14f", WorkspaceFile: "#59a14f", ToolResults: "#e15759", Skill: "#b07aa1",
  WorldInfo: "#f28e2b", ChatHistory: "#4e79a7",
};
function colour(cat) {
  if (Object.prototype.hasOwnProperty.call(COLOURS, cat)) return COLOURS[cat];
  let h = 0;
  for (const ch of String(cat)) h = (h * 31 + ch.codePointAt(0)) % 360;
  return "hsl(" + h + ", 45%, 60%)";
}
const ORDER = ["history", "summary", "worldInfo", "authorsNote", "charactersNote", "persona",
  "injection", "workspaceFile", "toolResult", "skill"];
function byOrder(a, b) {
  const ia = ORDER.indexOf(a), ib = ORDER.indexOf(b);
  if (ia !== ib) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

// the categories switched off: their rows are hidden and the charts are drawn without them
const HIDDEN = new Set();
const REDRAW = [];

function applyHidden() {
  for (const node of document.querySelectorAll("[data-cats]")) {
    const cats = node.dataset.cats.split(" ");
    node.hidden = cats.every((c) => HIDDEN.has(c));
  }
  for (const redraw of REDRAW) redraw();
}

function legend(cats) {
  const box = el("div", { class: "legend", role: "group", "aria-label": "categories" });
  for (const cat of cats) {
    const input = el("input", { type: "checkbox", checked: true, dataset: { cat: cat } });
    input.addEventListener("change", () => {
      if (input.checked) HIDDEN.delete(cat);
      else HIDDEN.add(cat);
      applyHidden();
    });
    box.append(el("label", {}, input, swatch(cat), cat));
  }
  return box;
}

function swatch(cat) {
  const s = el("span", { class: "swatch" });
  s.style.setProperty("background", colour(cat));
  return s;
}

// a table; columns: {label, num, value(row) for sorting, cell(row) -> text or node};
// sortable columns sort on a click (ascending, then descending); rowCats(row) -> data-cats
function table(columns, rows, opts) {
  opts = opts || {};
  const head = el("tr");
  const body = el("tbody");
  const trs = rows.map((row, i) => {
    const tr = el("tr", { dataset: opts.rowCats ? { cats: opts.rowCats(row) } : {} });
    if (opts.rowId) tr.dataset.id = opts.rowId(row);
    tr.dataset.index = String(i);
    for (const c of columns) {
      const v = c.cell ? c.cell(row) : c.value(row);
      const td = el("td", { class: c.num ? "num" : c.cls || null }, v instanceof Node ? v : String(v));
      if (c.key) td.dataset.col = c.key;
      tr.append(td);
    }
    return { tr: tr, row: row, i: i };
  });
  columns.forEach((c, ci) => {
    const th = el("th", { class: (c.num ? "num " : "") + (opts.sortable ? "sortable" : ""), text: c.label });
    if (c.key) th.dataset.col = c.key;
    if (opts.sortable) {
      th.setAttribute("aria-sort", "none");
      th.setAttribute("tabindex", "0");
      const sort = () => {
        const dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        for (const other of head.children) other.setAttribute("aria-sort", "none");
        th.setAttribute("aria-sort", dir);
        const key = (t) => (c.value ? c.value(t.row) : null);
        const sign = dir === "ascending" ? 1 : -1;
        trs.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === y) return a.i - b.i;
          if (x === null || x === undefined) return 1;  // no value: last either way
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * sign;
        });
        for (const t of trs) body.append(t.tr);
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") sort(); });
    }
    head.append(th);
  });
  for (const t of trs) body.append(t.tr);
  return el("div", { class: "table-wrap" }, el("table", { class: opts.cls || null }, el("thead", {}, head), body));
}

function pill(text, cls) {
  return el("span", { class: "pill " + (cls || text), text: text });
}

function diagnostics(list) {
  const box = el("div", { id: "diagnostics" });
  for (const d of list) {
    const where = d.file ? d.file + (d.line ? ":" + d.line + ":" + d.column : "") : (d.path || "");
    box.append(el("div", { class: "diag " + d.severity, dataset: { code: d.code } },
      el("div", {}, pill(d.severity, d.severity), " ", el("code", { text: d.code }), " ",
        el("span", { class: "muted", text: where })),
      el("div", { text: d.message }),
      d.hint ? el("div", { class: "note", text: "hint: " + d.hint }) : null));
  }
  if (!list.length) box.append(el("p", { class: "muted", text: "none" }));
  return box;
}

// a figure with its label; ``raw``: the JSON's number it shows (data-value; none when null)
function card(label, value, key, raw) {
  const data = key ? { field: key } : {};
  if (raw !== null && raw !== undefined) data.value = String(raw);
  return el("div", { class: "card", dataset: data },
    el("b", { text: value }), el("span", { text: label }));
}
