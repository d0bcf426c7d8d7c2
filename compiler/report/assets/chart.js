// apc report: small SVG charts (stacked bars per turn, lines per turn, horizontal bars).
const CHART = { W: 560, H: 240, left: 52, right: 12, top: 24, bottom: 30 };
const MARK_COLOUR = "#1f2328";

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// the frame of a chart over turns: axes, y ticks, x labels (the turns' message counts)
function frame(label, xLabels, yMax, yFmt) {
  const c = CHART;
  const svg = svgEl("svg", { viewBox: "0 0 " + c.W + " " + c.H, role: "img", "aria-label": label });
  const plotW = c.W - c.left - c.right, plotH = c.H - c.top - c.bottom;
  const y = (v) => c.top + plotH - (v / yMax) * plotH;
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4;
    svg.append(svgEl("line", { x1: c.left, x2: c.W - c.right, y1: y(v), y2: y(v), class: "axis" }));
    svg.append(svgEl("text", { x: c.left - 4, y: y(v) + 4, "text-anchor": "end", text: yFmt(v) }));
  }
  const n = xLabels.length, step = plotW / Math.max(n, 1);
  const every = Math.max(1, Math.ceil(n / 10));
  xLabels.forEach((t, i) => {
    if (i % every === 0 || i === n - 1) {
      svg.append(svgEl("text", { x: c.left + step * (i + 0.5), y: c.H - c.bottom + 14, "text-anchor": "middle", text: t }));
    }
  });
  svg.append(svgEl("text", { x: c.left + plotW / 2, y: c.H - 3, "text-anchor": "middle", class: "muted", text: "turn (messages in the chat)" }));
  return { svg: svg, y: y, x: (i) => c.left + step * i, step: step, plotH: plotH };
}

// values per turn, stacked: tokens per category (``opts.budgets`` per turn draws the
// budget's line), or tokens or counts (``opts.counts``: whole-number ticks) of series with
// their own ``colour`` (a legend); ``opts.marks`` ({name, values}) draws a dash per turn
function stackedTurns(label, xLabels, series, opts) {
  opts = opts || {};
  const budgets = opts.budgets || [], marks = opts.marks || null, counts = !!opts.counts;
  const totals = xLabels.map((_, i) => series.reduce((s, ser) => s + (ser.values[i] || 0), 0));
  const marked = marks ? marks.values.filter((v) => v !== null && v !== undefined) : [];
  const most = Math.max(1, ...totals, ...budgets.filter((b) => b !== null), ...marked);
  const yMax = counts ? 4 * Math.ceil(most / 4) : niceMax(most);
  const f = frame(label, xLabels, yMax, fmt);
  const keyed = series.filter((ser) => ser.colour).map((ser) => ({ name: ser.name, colour: ser.colour }));
  if (marks) keyed.push({ name: marks.name, colour: MARK_COLOUR, dash: true });
  let lx = CHART.left + 6;
  for (const k of keyed) {
    f.svg.append(k.dash ? svgEl("rect", { x: lx, y: 6, width: 10, height: 2, fill: k.colour })
      : svgEl("rect", { x: lx, y: 2, width: 10, height: 10, fill: k.colour }));
    f.svg.append(svgEl("text", { x: lx + 14, y: 11, text: k.name }));
    lx += 24 + 7 * k.name.length;
  }
  const unit = counts ? "" : " tokens";
  xLabels.forEach((t, i) => {
    let base = 0;
    for (const ser of series) {
      const v = ser.values[i] || 0;
      if (!v) continue;
      const rect = svgEl("rect", { x: f.x(i) + f.step * 0.1, width: Math.max(f.step * 0.8, 0.5), y: f.y(base + v), height: Math.max(f.y(base) - f.y(base + v), 0.3), fill: ser.colour || colour(ser.name), "data-cat": ser.name, "data-turn": t, "data-tokens": v });
      f.svg.append(tip(rect, "turn of " + t + " messages: " + ser.name + " " + fmt(v) + unit));
      base += v;
    }
    const m = marks ? marks.values[i] : null;
    if (m !== null && m !== undefined) {
      const mark = svgEl("line", { x1: f.x(i) + f.step * 0.04, x2: f.x(i + 1) - f.step * 0.04, y1: f.y(m), y2: f.y(m), class: "mark", "data-turn": t, "data-value": m });
      f.svg.append(tip(mark, "turn of " + t + " messages: " + marks.name + " " + fmt(m)));
    }
  });
  const pts = budgets.map((b, i) => (b === null ? null : [f.x(i), f.y(b), f.x(i + 1)])).filter((p) => p);
  if (pts.length) {
    const d = pts.map((p, i) => (i ? "L" : "M") + p[0] + " " + p[1] + " L" + p[2] + " " + p[1]).join(" ");
    f.svg.append(tip(svgEl("path", { d: d, class: "budget", fill: "none" }), "budget"));
  }
  return f.svg;
}

// one line per series over the turns (null: no point; the line breaks there)
function lines(label, xLabels, series, yMax, yFmt) {
  const f = frame(label, xLabels, yMax, yFmt);
  for (const ser of series) {
    let d = "", pen = "M";
    ser.values.forEach((v, i) => {
      if (v === null || v === undefined) { pen = "M"; return; }
      const x = f.x(i) + f.step / 2, y = f.y(v);
      d += pen + x.toFixed(1) + " " + y.toFixed(1) + " ";
      pen = "L";
      f.svg.append(tip(svgEl("circle", { cx: x, cy: y, r: 2.5, fill: ser.colour, "data-series": ser.name, "data-value": v }), ser.name + ", turn of " + xLabels[i] + " messages: " + yFmt(v)));
    });
    if (d) f.svg.append(svgEl("path", { d: d, fill: "none", stroke: ser.colour, "stroke-width": 1.6 }));
  }
  let lx = CHART.left + 6;
  for (const ser of series) {
    f.svg.append(svgEl("rect", { x: lx, y: 2, width: 10, height: 10, fill: ser.colour }));
    const t = svgEl("text", { x: lx + 14, y: 11, text: ser.name });
    f.svg.append(t);
    lx += 24 + 7 * ser.name.length;
  }
  return f.svg;
}

// horizontal bars, one per row, stacked by key: rows [{name, parts: {key: n}}]
function hbars(label, rows, keys, keyColours) {
  const rowH = 20, left = 130, W = CHART.W, top = 18;
  const max = Math.max(1, ...rows.map((r) => keys.reduce((s, k) => s + (r.parts[k] || 0), 0)));
  const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + (top + rowH * rows.length + 6), role: "img", "aria-label": label });
  let lx = left;
  keys.forEach((k) => {
    svg.append(svgEl("rect", { x: lx, y: 2, width: 10, height: 10, fill: keyColours[k] }));
    svg.append(svgEl("text", { x: lx + 14, y: 11, text: k }));
    lx += 24 + 7 * k.length;
  });
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    svg.append(svgEl("text", { x: left - 6, y: y + 14, "text-anchor": "end", text: r.name }));
    let x = left, total = 0;
    for (const k of keys) {
      const v = r.parts[k] || 0;
      if (!v) continue;
      const w = (v / max) * (W - left - 60);
      svg.append(tip(svgEl("rect", { x: x, y: y + 3, width: w, height: rowH - 6, fill: keyColours[k], "data-cat": r.name, "data-cut": k, "data-turns": v }), r.name + ": " + k + " in " + v + " turns"));
      x += w;
      total += v;
    }
    svg.append(svgEl("text", { x: x + 4, y: y + 14, text: total ? String(total) : "0" }));
  });
  return svg;
}
