// apc explain --format html: the ledger of one compile, its request's messages, the
// lorebook debugger and the diagnostics, from DATA.explain (apc explain --format json).
(function () {
  const L = DATA.explain;
  const app = document.getElementById("app");
  const catOf = (e) => e.category || e.kind;

  const cats = new Set();
  for (const e of L.entries) {
    cats.add(catOf(e));
    for (const c of Object.keys(e.usedByCategory || {})) cats.add(c);
  }
  for (const m of (DATA.messages ? DATA.messages.messages : [])) for (const p of m.parts) cats.add(p.category);
  if (L.overheadTokens) cats.add("overhead");
  const catList = [...cats].sort(byOrder);

  let meta = L.provider + " " + L.model + " (" + L.encoding + "); budget " + fmt(L.budget) +
    " from " + L.budgetSource;
  if (L.window) meta += ", window " + fmt(L.window);
  if (L.reserve) meta += ", reserve " + fmt(L.reserve);
  if (L.cacheStable) meta += ", cache-stable step " + L.cacheStable;
  app.append(el("h1", { text: "apc explain: " + DATA.source }), el("p", { class: "meta", id: "meta", text: meta }));
  if (DATA.failed) {
    app.append(el("p", { class: "diag error", text: "The fit failed: the ledger below stops at the component whose budget could not be met (failed); those after it were not reached." }));
  }
  app.append(el("div", { class: "cards" },
    card("request tokens", DATA.failed ? "none (failed)" : fmt(L.totalTokens), "totalTokens"),
    card("components", fmt(L.totalTokens - L.overheadTokens), "componentTokens"),
    card("overhead", fmt(L.overheadTokens), "overheadTokens"),
    card("budget", fmt(L.budget), "budget"),
    card("counts", L.counts === "estimate" ? "estimate (" + pct(L.safetyMargin) + " held back)" : "exact", "counts")));
  if (L.squashSavedTokens) {
    app.append(el("p", { class: "note", text: "The budget counted " + fmt(L.totalTokens + L.squashSavedTokens) + " tokens: each system message apart, before squash_system_messages merged them (" + fmt(L.squashSavedTokens) + " fewer sent)." }));
  }

  // -- the budget: offered, granted and used, by category and component -----------------
  app.append(el("h2", { text: "Budget by category and component" }), legend(catList));
  const chartBox = el("div", { id: "budget-chart" });
  app.append(chartBox, el("p", { class: "note", text: "One segment per component, coloured by its budget category (a component in none: its kind). Offered: its tokens before fitting (a long history not counted whole: what it used); granted: what the smallest budget that applied let it keep, up to what it offered; used: what the request holds, with the provider's framing (overhead). Switch a category off above to leave it out of the chart and the tables." }));

  function segments(bar) {
    const out = [];
    L.entries.forEach((e, i) => {
      if (bar === "used") {
        const split = e.usedByCategory || { [catOf(e)]: e.tokensUsed };
        for (const [cat, n] of Object.entries(split)) out.push({ id: e.id, cat: cat, n: n, i: i });
      } else {
        const offered = e.tokensOffered === null ? e.tokensUsed : e.tokensOffered;
        const granted = e.tokensGranted === null ? offered : Math.min(e.tokensGranted, offered);
        const n = bar === "offered" ? offered : granted;
        out.push({ id: e.id, cat: catOf(e), n: n, i: i });
      }
    });
    if (bar === "used" && L.overheadTokens) out.push({ id: "overhead", cat: "overhead", n: L.overheadTokens, i: 1e9 });
    return out.filter((s) => s.n > 0 && !HIDDEN.has(s.cat))
      .sort((a, b) => byOrder(a.cat, b.cat) || a.i - b.i);
  }

  function drawBudget() {
    const bars = ["offered", "granted", "used"].map((name) => ({ name: name, segs: segments(name) }));
    for (const b of bars) b.total = b.segs.reduce((s, x) => s + x.n, 0);
    const most = Math.max(1, ...bars.map((b) => b.total));
    const budgetShown = L.budget !== null && L.budget <= 3 * most;  // else it squeezes the bars
    const max = budgetShown ? Math.max(most, L.budget) : most;
    const W = 1000, left = 70, right = 110, rowH = 34, top = 18;
    const scale = (W - left - right) / max;
    const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + (top + rowH * 3 + 10), role: "img", "aria-label": "budget chart" });
    bars.forEach((b, r) => {
      const y = top + r * rowH;
      svg.append(svgEl("text", { x: 0, y: y + 17, text: b.name }));
      let x = left;
      for (const s of b.segs) {
        const w = s.n * scale;
        const rect = svgEl("rect", { x: x, y: y + 2, width: Math.max(w, 0.5), height: rowH - 10, fill: colour(s.cat), stroke: "#fff", "stroke-width": 0.6, "data-bar": b.name, "data-cat": s.cat, "data-id": s.id, "data-tokens": s.n });
        svg.append(tip(rect, s.id + " (" + s.cat + "): " + fmt(s.n) + " tokens " + b.name));
        x += w;
      }
      svg.append(svgEl("text", { x: x + 6, y: y + 17, "data-total": b.name, text: fmt(b.total) }));
    });
    if (L.budget !== null && !budgetShown) {
      svg.append(svgEl("text", { x: W - 4, y: 11, "text-anchor": "end", text: "budget " + fmt(L.budget) + " (off the scale)" }));
    } else if (L.budget !== null) {
      const bx = left + L.budget * scale;
      svg.append(svgEl("line", { x1: bx, x2: bx, y1: top - 4, y2: top + rowH * 3, class: "budget" }));
      svg.append(svgEl("text", { x: Math.min(bx, W - 100), y: 11, text: "budget " + fmt(L.budget) }));
    }
    chartBox.replaceChildren(svg);
  }
  REDRAW.push(drawBudget);
  drawBudget();

  // -- categories and the ledger --------------------------------------------------------
  app.append(el("h2", { text: "Categories" }));
  const catRows = Object.entries(L.categories).filter(([, c]) => c.used || c.budget !== null)
    .map(([name, c]) => ({ name: name, budget: c.budget, used: c.used }));
  app.append(table([
    { key: "category", label: "category", value: (r) => r.name, cell: (r) => el("span", {}, swatch(r.name), " ", r.name) },
    { key: "budget", label: "budget", num: true, value: (r) => r.budget, cell: (r) => fmt(r.budget) },
    { key: "used", label: "used", num: true, value: (r) => r.used, cell: (r) => fmt(r.used) },
  ], catRows, { rowCats: (r) => r.name, cls: "categories" }));
  if (!catRows.length) app.append(el("p", { class: "muted", text: "No component in a budget category used tokens, and no category has a budget." }));

  app.append(el("h2", { text: "Ledger" }), el("p", { class: "note", text: "Click a column to sort by it." }));
  const num = (f) => (e) => f(e);
  app.append(table([
    { key: "id", label: "id", value: (e) => e.id },
    { key: "kind", label: "kind", value: (e) => e.kind },
    { key: "category", label: "category", value: catOf, cell: (e) => el("span", {}, swatch(catOf(e)), " ", catOf(e)) },
    { key: "offered", label: "offered", num: true, value: num((e) => e.tokensOffered),
      cell: (e) => fmt(e.tokensOffered) + (e.messagesOffered === null ? "" : " (" + e.messagesKept + "/" + e.messagesOffered + " msgs)") },
    { key: "own", label: "own", num: true, value: (e) => e.budget.own, cell: (e) => fmt(e.budget.own) },
    { key: "categoryBudget", label: "category budget", num: true, value: (e) => e.budget.category, cell: (e) => fmt(e.budget.category) },
    { key: "total", label: "total", num: true, value: (e) => e.budget.total, cell: (e) => fmt(e.budget.total) },
    { key: "granted", label: "granted", num: true, value: (e) => e.tokensGranted, cell: (e) => fmt(e.tokensGranted) },
    { key: "used", label: "used", num: true, value: (e) => e.tokensUsed,
      cell: (e) => fmt(e.tokensUsed) + (e.summaryTokens ? " (+" + fmt(e.summaryTokens) + " sum.)" : "") },
    { key: "action", label: "action", value: (e) => e.action, cell: (e) => pill(e.action) },
    { key: "strategy", label: "strategy", value: (e) => e.strategy, cell: (e) => e.strategy || "-" },
    { key: "reason", label: "why", cls: "why", value: (e) => e.reason,
      cell: (e) => (e.reason || "") + (e.usedByCategory ? " [used: " + Object.entries(e.usedByCategory).map(([k, v]) => k + " " + fmt(v)).join(", ") + "]" : "") },
  ], L.entries, { sortable: true, cls: "ledger", rowId: (e) => e.id,
    rowCats: (e) => [catOf(e), ...Object.keys(e.usedByCategory || {})].join(" ") }));

  // -- the request's messages -----------------------------------------------------------
  app.append(el("h2", { text: "Request messages" }));
  if (!DATA.messages) {
    app.append(el("p", { class: "muted", text: "No request: the compile failed before one was made." }));
  } else {
    if (DATA.messages.squashed) {
      app.append(el("p", { class: "note", text: "System messages are listed apart, as the budget counted them; the request merges each run of them into one (squash_system_messages)." }));
    }
    const list = el("ol", { class: "messages" });
    DATA.messages.messages.forEach((m, i) => {
      const partCats = [...new Set(m.parts.map((p) => p.category))];
      const strip = el("div", { class: "strip" });
      const known = m.parts.every((p) => p.tokens !== null) && m.parts.length > 1;
      const sum = known ? m.parts.reduce((s, p) => s + p.tokens, 0) : 0;
      for (const p of m.parts) {
        const seg = el("span", { title: p.id + " (" + p.category + ")" + (p.tokens === null ? "" : ": " + fmt(p.tokens) + " tokens") });
        seg.style.setProperty("background", colour(p.category));
        seg.style.setProperty("width", (known && sum ? (100 * p.tokens) / sum : 100 / m.parts.length) + "%");
        strip.append(seg);
      }
      const head = el("div", { class: "msg-head" }, el("span", { class: "muted", text: "#" + (i + 1) }), pill(m.role, "role"),
        m.name ? el("b", { text: m.name }) : null,
        el("span", { class: "muted", text: [...new Set(m.parts.map((p) => p.id))].join(", ") + " \u00b7 " + partCats.join(", ") }),
        el("span", { class: "tokens", text: fmt(m.tokens) + " tokens" }));
      const more = m.chars > m.text.length ? "\n\u2026 (" + fmt(m.chars - m.text.length) + " more characters)" : "";
      list.append(el("li", { dataset: { cats: partCats.join(" "), tokens: String(m.tokens), role: m.role } }, strip, head, el("pre", { text: m.text + more })));
    });
    app.append(list);
  }

  // -- the lorebook debugger ------------------------------------------------------------
  app.append(el("h2", { text: "World info" }));
  const W = L.worldInfo;
  if (!W) {
    app.append(el("p", { class: "muted", text: "No lorebook was scanned." }));
  } else {
    app.append(el("p", { id: "world-summary", text: fmt(W.considered) + " entries considered, " + fmt(W.activated) + " activated; " + (W.budget === null ? "no budget" : "budget " + fmt(W.budget) + " tokens") }));
    const where = (d) => {
      const p = d.placement;
      if (!p) return "-";
      return p.position + (p.depth !== undefined ? " @" + p.depth + " " + p.role : "") + ", order " + p.order + (p.component ? ", " + p.component : "") + (p.note ? " (" + p.note + ")" : "");
    };
    app.append(table([
      { key: "uid", label: "uid", value: (d) => String(d.uid) },
      { key: "entry", label: "entry", value: (d) => d.comment, cell: (d) => d.comment || "-" },
      { key: "world", label: "book", value: (d) => d.world },
      { key: "status", label: "status", value: (d) => (d.activated ? "activated" : d.reason), cell: (d) => pill(d.activated ? "activated" : d.reason, d.activated ? "activated" : "skipped") },
      { key: "fit", label: "fit", value: (d) => (d.placement ? d.placement.fit : null), cell: (d) => (d.placement && d.placement.fit) || "-" },
      { key: "where", label: "placed", value: where },
      { key: "why", label: "why", cls: "why", value: (d) => d.why },
    ], W.entries, { sortable: true, cls: "world" }));
    const omitted = Object.entries(W.omitted || {});
    if (omitted.length) {
      app.append(el("p", { class: "note", text: "Not listed: " + omitted.map(([k, n]) => fmt(n) + " " + k).join(", ") }));
    }
  }

  app.append(el("h2", { text: DATA.failed ? "Errors" : "Warnings" }), diagnostics(DATA.diagnostics));
})();
