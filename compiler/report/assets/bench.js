// apc bench --format html: the runs side by side, then per budget the turns charted and the
// per-category and per-component figures, from DATA.bench (apc bench --format json).
(function () {
  const B = DATA.bench;
  const app = document.getElementById("app");
  const CUTS = ["truncated", "summarized", "dropped", "skipped"];
  const CUT_COLOURS = { truncated: "#edc948", summarized: "#76b7b2", dropped: "#e15759", skipped: "#bab0ac" };
  const three = (s) => (s.count ? fmt(s.median) + " / " + fmt(s.p95) + " / " + fmt(s.max) : "-");
  const budgetOf = (r) => (r.budget !== null ? fmt(r.budget) : r.effectiveBudget ? "default " + fmt(r.effectiveBudget) : "default");
  const labelOf = (r) => (r.budget !== null ? "budget " + fmt(r.budget) : "default budget") + (r.cacheStable ? ", cache-stable " + r.cacheStable : "");
  const failedOf = (r) => Object.values(r.failed).reduce((s, n) => s + n, 0);

  const every = B.every === 1 ? "every turn" : "one turn in " + B.every;
  app.append(el("h1", { text: "apc bench: " + B.source }),
    el("p", { class: "meta", id: "meta", text: B.turns.length + " turns of a " + B.messages + "-message chat (" + every + "), " + B.provider + " " + (B.model || "?") + " (" + (B.encoding || "?") + ")" }));

  // -- the runs side by side (the text report's first table) ----------------------------
  const rows = [
    ["cache-stable", (r) => (r.cacheStable ? String(r.cacheStable) : "off") + (r.primary ? "" : " (cmp)")],
    ["turns compiled", (r) => String(r.turns - failedOf(r))],
    ["turns failed", (r) => String(failedOf(r))],
    ["tokens med / p95 / max", (r) => three(r.totalTokens)],
    ["budget use med / max", (r) => pct(r.budgetUse.median) + " / " + pct(r.budgetUse.max)],
    ["compile ms med / p95 / max", (r) => ms(r.compileMs.median) + " / " + ms(r.compileMs.p95) + " / " + ms(r.compileMs.max)],
    ["prefix stability mean / min", (r) => pct(r.prefixStability.mean) + " / " + pct(r.prefixStability.min)],
    ["cached share mean / min", (r) => pct(r.cachedShare.mean) + " / " + pct(r.cachedShare.min)],
  ];
  app.append(el("h2", { text: "Runs" }));
  const cols = [{ key: "row", label: "budget", value: (r) => r[0] }];
  B.runs.forEach((run, i) => cols.push({ key: "run" + i, label: budgetOf(run), num: true, value: (r) => r[1](run) }));
  app.append(table(cols, rows, { cls: "summary", rowId: (r) => r[0] }));

  // -- the categories across the runs: one switch each ----------------------------------
  const cats = new Set();
  for (const run of B.runs) {
    for (const c of run.categories) cats.add(c.name);
    for (const t of run.perTurn) for (const k of Object.keys(t.categories)) cats.add(k);
  }
  const catList = [...cats].sort(byOrder);
  app.append(el("h2", { text: "Categories" }), legend(catList),
    el("p", { class: "note", text: "Switch a category off to leave it out of the charts and the tables." }));

  const xLabels = (run) => run.perTurn.map((t) => String(t.messages));
  B.runs.forEach((run, ri) => {
    if (!run.primary) return;
    const section = el("section", { class: "run", dataset: { run: String(ri) } });
    section.append(el("h2", { text: labelOf(run) }));
    const charts = el("div", { class: "grid" });
    const tokensBox = el("div", { class: "chart tokens" });
    const draw = () => {
      const series = catList.filter((c) => !HIDDEN.has(c)).map((c) => ({ name: c, values: run.perTurn.map((t) => t.categories[c] || 0) }));
      tokensBox.replaceChildren(el("h3", { text: "Tokens per category" }), stackedTurns("tokens per category", xLabels(run), series, run.perTurn.map((t) => t.budget)));
    };
    REDRAW.push(draw);
    draw();
    charts.append(tokensBox);
    const cmp = B.runs.find((r) => !r.primary && r.budget === run.budget);
    const stab = [{ name: run.cacheStable ? "cache-stable " + run.cacheStable : "cache-stable off", colour: "#4e79a7", values: run.perTurn.map((t) => t.prefixStability) }];
    if (cmp) stab.push({ name: (cmp.cacheStable ? "cache-stable " + cmp.cacheStable : "cache-stable off") + " (cmp)", colour: "#f28e2b", values: cmp.perTurn.map((t) => t.prefixStability) });
    charts.append(el("div", { class: "chart stability" }, el("h3", { text: "Prefix stability" }), lines("prefix stability", xLabels(run), stab, 1, pct)));
    const msMax = niceMax(Math.max(0.1, ...run.perTurn.map((t) => t.compileMs)));
    charts.append(el("div", { class: "chart compile" }, el("h3", { text: "Compile time (ms)" }), lines("compile time", xLabels(run), [{ name: "compile ms", colour: "#59a14f", values: run.perTurn.map((t) => t.compileMs) }], msMax, ms)));
    const perTurn = CUTS.map((k) => ({ name: k, colour: CUT_COLOURS[k], values: run.perTurn.map((t) => (t.cuts || {})[k] || 0) }));
    charts.append(el("div", { class: "chart turn-cuts" }, el("h3", { text: "Components cut per turn" }), stackedTurns("components cut per turn", xLabels(run), perTurn, [])));
    const cutBox = el("div", { class: "chart cuts" });
    const drawCuts = () => {
      const rows = run.categories.filter((c) => !HIDDEN.has(c.name)).map((c) => ({ name: c.name, parts: c.cuts }));
      cutBox.replaceChildren(el("h3", { text: "Turns with a cut, per category" }), hbars("cuts", rows, CUTS, CUT_COLOURS));
    };
    REDRAW.push(drawCuts);
    drawCuts();
    charts.append(cutBox);
    section.append(charts);

    if (run.components.length) {
      section.append(el("h3", { text: "Per category (tokens; cuts: turns with one)" }));
      const offered = (c) => three(c.offered) + (c.offeredUncounted ? " (" + c.offeredUncounted + " uncounted)" : "");
      section.append(table([
        { key: "category", label: "category", value: (c) => c.name, cell: (c) => el("span", {}, swatch(c.name), " ", c.name) },
        { key: "budget", label: "budget", num: true, value: (c) => c.budget, cell: (c) => fmt(c.budget) },
        { key: "kept", label: "kept med/p95/max", num: true, value: (c) => c.kept.median, cell: (c) => three(c.kept) },
        { key: "offered", label: "offered med/p95/max", num: true, value: (c) => c.offered.median, cell: offered },
        ...CUTS.map((k) => ({ key: k, label: k, num: true, value: (c) => c.cuts[k] || 0 })),
      ], run.categories, { sortable: true, cls: "categories", rowId: (c) => c.name, rowCats: (c) => c.name }));
      section.append(el("h3", { text: "Per component (tokens; cuts: turns)" }));
      section.append(table([
        { key: "id", label: "id", value: (c) => c.id },
        { key: "kind", label: "kind", value: (c) => c.kind },
        { key: "category", label: "category", value: (c) => c.category, cell: (c) => c.category || "-" },
        { key: "turns", label: "turns", num: true, value: (c) => c.turns },
        { key: "kept", label: "kept med/p95/max", num: true, value: (c) => c.kept.median, cell: (c) => three(c.kept) },
        { key: "offered", label: "offered med/p95/max", num: true, value: (c) => c.offered.median, cell: offered },
        { key: "msgs", label: "msgs kept/offered", num: true, value: (c) => (c.messagesKept ? c.messagesKept.median : null),
          cell: (c) => (c.messagesOffered && c.messagesKept ? fmt(c.messagesKept.median) + "/" + fmt(c.messagesOffered.median) : "-") },
        ...CUTS.map((k) => ({ key: k, label: k, num: true, value: (c) => c.actions[k] || 0 })),
      ], run.components, { sortable: true, cls: "components", rowId: (c) => c.id, rowCats: (c) => c.category || c.kind }));
    }
    if (failedOf(run)) {
      section.append(el("p", { class: "diag error", text: "Turns failed: " + Object.entries(run.failed).map(([code, n]) => n + " with " + code).join(", ") + "; first, " + run.firstFailure }));
    }
    app.append(section);
  });

  app.append(el("p", { class: "note", text: "prefix stability: the share of a turn's request that the next turn's keeps byte for byte from the start; cached share: the share of the next request that prefix is" }));
  app.append(el("h2", { text: "Warnings" }), diagnostics(B.warnings));
})();
