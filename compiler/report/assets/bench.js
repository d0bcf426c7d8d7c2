// apc bench --format html: the runs side by side, then per budget the turns charted and the
// per-category and per-component figures, from DATA.bench (apc bench --format json).
(function () {
  const B = DATA.bench;
  const app = document.getElementById("app");
  const CUTS = ["truncated", "summarized", "dropped", "skipped"];
  const CUT_COLOURS = { truncated: "#edc948", summarized: "#76b7b2", dropped: "#e15759", skipped: "#bab0ac" };
  // a turn's input as billed: [series, perTurn key, colour]
  const BILL_PARTS = [["cached", "cachedTokens", "#59a14f"], ["cache-written", "writtenTokens", "#f28e2b"], ["uncached", "uncachedTokens", "#4e79a7"]];
  const LINE_COLOURS = ["#4e79a7", "#f28e2b", "#b07aa1", "#59a14f"];
  const three = (s) => (s.count ? fmt(s.median) + " / " + fmt(s.p95) + " / " + fmt(s.max) : "-");
  const budgetOf = (r) => (r.budget !== null ? fmt(r.budget) : r.effectiveBudget ? "default " + fmt(r.effectiveBudget) : "default");
  const stepOf = (r) => (r.auto ? "auto " : "") + (r.cacheStable ? String(r.cacheStable) : "off");
  const labelOf = (r) => (r.budget !== null ? "budget " + fmt(r.budget) : "default budget") + (r.cacheStable ? ", cache-stable " + stepOf(r) : "");
  const mult = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));  // Python's repr of a float
  const perToken = (b) => (b.requestTokens ? pyFixed(b.billed / b.requestTokens, 3) + "x" : "-");
  const boundOf = (b) => (b.boundRatio === null ? "-" : pyFixed(b.boundRatio, 3) + "x (" + b.boundWindow + ")");
  const failedOf = (r) => Object.values(r.failed).reduce((s, n) => s + n, 0);

  const every = B.every === 1 ? "every turn" : "one turn in " + B.every;
  app.append(el("h1", { text: "apc bench: " + B.source }),
    el("p", { class: "meta", id: "meta", text: B.turns.length + " turns of a " + B.messages + "-message chat (" + every + "), " + B.provider + " " + (B.model || "?") + " (" + (B.encoding || "?") + ")" }),
    el("p", { class: "meta", id: "rule", text: ruleLine() }));

  // the prompt-cache rule the bills follow, in one line (as the text report writes it)
  function ruleLine() {
    const where = B.provider + " " + (B.model || "?"), r = B.cacheRule;
    if (!r) return "prompt cache: no rule known for " + where + ": every input token billed in full";
    const how = r.caching === "explicit" ? "explicit breakpoints, writes at " + mult(r.writeMultiplier) + "x" : "automatic prefix";
    const step = r.incrementTokens > 1 ? " in steps of " + fmt(r.incrementTokens) : "";
    return "prompt cache of " + where + ": " + how + ", from " + fmt(r.minimumTokens) + " tokens" + step + ", reads at " + mult(r.readMultiplier) + "x the input price (as of " + r.asOf + ")";
  }

  // -- the runs side by side (the text report's first table) ----------------------------
  const rows = [
    ["cache-stable", (r) => stepOf(r) + (r.primary ? "" : " (cmp)")],
    ["turns compiled", (r) => String(r.turns - failedOf(r))],
    ["turns failed", (r) => String(failedOf(r))],
    ["tokens med / p95 / max", (r) => three(r.totalTokens)],
    ["budget use med / max", (r) => pct(r.budgetUse.median) + " / " + pct(r.budgetUse.max)],
    ["compile ms med / p95 / max", (r) => ms(r.compileMs.median) + " / " + ms(r.compileMs.p95) + " / " + ms(r.compileMs.max)],
    ["prefix stability mean / min", (r) => pct(r.prefixStability.mean) + " / " + pct(r.prefixStability.min)],
    ["cached share mean / min", (r) => pct(r.cachedShare.mean) + " / " + pct(r.cachedShare.min)],
    // the bill: tokens read from the cache, written, billed in full; the replay's input in
    // base-price tokens and per request token; the bound's ratio
    ["input tokens cached", (r) => fmt(r.bill.cached)],
    ["input tokens cache-written", (r) => fmt(r.bill.written)],
    ["input tokens uncached", (r) => fmt(r.bill.uncached)],
    ["billed input (base tokens)", (r) => fmt(r.bill.billed)],
    ["billed per request token", (r) => perToken(r.bill)],
    ["cached share of request, mean", (r) => pct(r.bill.cachedShare)],
    ["bill / least bound (window)", (r) => boundOf(r.bill)],
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
    const b = run.bill;
    section.append(el("div", { class: "cards bill" },
      card("billed input (base tokens)", fmt(b.billed), "billed", b.billed),
      card("billed per request token", perToken(b), "perRequestToken", b.requestTokens ? b.billed / b.requestTokens : null),
      card("cached share of request, mean", pct(b.cachedShare), "cachedShare", b.cachedShare),
      card("bill / least bound (window)", boundOf(b), "boundRatio", b.boundRatio)));
    const charts = el("div", { class: "grid" });
    const tokensBox = el("div", { class: "chart tokens" });
    const draw = () => {
      const series = catList.filter((c) => !HIDDEN.has(c)).map((c) => ({ name: c, values: run.perTurn.map((t) => t.categories[c] || 0) }));
      tokensBox.replaceChildren(el("h3", { text: "Tokens per category" }), stackedTurns("tokens per category", xLabels(run), series, { budgets: run.perTurn.map((t) => t.budget) }));
    };
    REDRAW.push(draw);
    draw();
    charts.append(tokensBox);
    const billed = BILL_PARTS.map(([name, key, c]) => ({ name: name, colour: c, values: run.perTurn.map((t) => t[key] || 0) }));
    const marks = { name: "billed (base tokens)", values: run.perTurn.map((t) => t.billed) };
    charts.append(el("div", { class: "chart bill" }, el("h3", { text: "Input tokens per turn, as billed" }), stackedTurns("input tokens per turn as billed", xLabels(run), billed, { marks: marks })));
    // the comparison runs of the budget (cache-stable the other way; with auto, off and the default step)
    const cmps = B.runs.filter((r) => !r.primary && r.budget === run.budget);
    const stab = [run, ...cmps].map((r, k) => ({ name: "cache-stable " + stepOf(r) + (r.primary ? "" : " (cmp)"), colour: LINE_COLOURS[k % LINE_COLOURS.length], values: r.perTurn.map((t) => t.prefixStability) }));
    charts.append(el("div", { class: "chart stability" }, el("h3", { text: "Prefix stability" }), lines("prefix stability", xLabels(run), stab, 1, pct)));
    const msMax = niceMax(Math.max(0.1, ...run.perTurn.map((t) => t.compileMs)));
    charts.append(el("div", { class: "chart compile" }, el("h3", { text: "Compile time (ms)" }), lines("compile time", xLabels(run), [{ name: "compile ms", colour: "#59a14f", values: run.perTurn.map((t) => t.compileMs) }], msMax, ms)));
    const perTurn = CUTS.map((k) => ({ name: k, colour: CUT_COLOURS[k], values: run.perTurn.map((t) => (t.cuts || {})[k] || 0) }));
    charts.append(el("div", { class: "chart turn-cuts" }, el("h3", { text: "Components cut per turn" }), stackedTurns("components cut per turn", xLabels(run), perTurn, { counts: true })));
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

  app.append(el("p", { class: "note", text: "prefix stability: the share of a turn's request that the next turn's keeps byte for byte from the start; cached share: the share of the next request that prefix is" }),
    el("p", { class: "note", text: "billed input: the replay's input tokens at the prompt cache's multipliers; the least bound: the cheapest cut sequence that cuts at most (window) messages more than fits" }));
  app.append(el("h2", { text: "Warnings" }), diagnostics(B.warnings));
})();
