"use strict";
// Charts of each metric's daily average over the last 30 days, streaks from the node's per-day
// counts, and bars of the counts by category and source: all from GET /api/entries/stats, its
// days the browser's local ones (`utc_offset`, dashboard.js).

/// `byDay`: metric name → local day → {count, average, min, max}.
function renderCharts(byDay) {
  once("charts", byDay, () => {
    const ordered = Object.entries(byDay).map(([name, days]) => [name, Object.entries(days)])
      .sort((a, b) => b[1].length - a[1].length).slice(0, 12);
    const charts = ordered.map(([name, days]) => chart(name, days.map(([day, m]) => [Date.parse(day + "T12:00:00"), m.average, m.count])));
    fill("#charts", charts.length ? charts : [h("p", { class: "muted" }, "No metrics in the last 30 days (entries with data.metric).")]);
  });
}

/// `points`: [time, daily average, entries that day], in time order.
function chart(name, points) {
  const W = 240, H = 110, L = 30, R = 8, T = 8, B = 18;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  let lo = Math.min(...ys), hi = Math.max(...ys);
  if (lo === hi) { lo -= 1; hi += 1; }
  const x0 = Math.min(...xs), x1 = Math.max(...xs) === x0 ? x0 + 1 : Math.max(...xs);
  const px = (t) => L + (W - L - R) * (t - x0) / (x1 - x0), py = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
  const line = points.map((p) => px(p[0]).toFixed(1) + "," + py(p[1]).toFixed(1)).join(" ");
  const last = points[points.length - 1][1];
  const label = { "font-size": 9, fill: "#777" };
  return h("div", { class: "chart" }, h("h3", {}, name + " ", h("span", { class: "muted" }, "latest day " + number(last) + " · " + points.length + (points.length === 1 ? " day" : " days"))),
    s("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": name + " over time", "data-metric": name },
      s("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#ccc" }), s("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#ccc" }),
      s("text", { x: L - 4, y: T + 8, "text-anchor": "end", ...label }, number(hi)),
      s("text", { x: L - 4, y: H - B, "text-anchor": "end", ...label }, number(lo)),
      s("text", { x: L, y: H - 4, ...label }, new Date(x0).toLocaleDateString()),
      s("text", { x: W - R, y: H - 4, "text-anchor": "end", ...label }, new Date(x1).toLocaleDateString()),
      points.length > 1 && s("polyline", { points: line, fill: "none", stroke: "#2f6f9f", "stroke-width": 1.6 }),
      points.map((p) => s("circle", { cx: px(p[0]).toFixed(1), cy: py(p[1]).toFixed(1), r: 2.4, fill: "#2f6f9f" },
        s("title", {}, new Date(p[0]).toLocaleDateString() + ": " + number(p[1]) + " (average of " + p[2] + ")")))));
}

/// `byDay`: the node's counts per local day, all of the journal (a few thousand keys for years);
/// a streak is of days as the person lives them, today the browser's today.
function renderStreaks(byDay) {
  const days = new Set(Object.keys(byDay || {}));
  const step = stepDay;
  let current = 0, cursor = dayOf(Date.now());
  if (!days.has(cursor)) cursor = step(cursor, -1);
  while (days.has(cursor) && current < 100000) { current++; cursor = step(cursor, -1); }
  let longest = 0;
  for (const d of days) {
    if (days.has(step(d, -1))) continue;
    let run = 0, c = d;
    while (days.has(c) && run < 100000) { run++; c = step(c, 1); }
    longest = Math.max(longest, run);
  }
  fill("#streaks", h("div", {}, h("b", { id: "streak-current" }, current), "current streak (days)"),
    h("div", {}, h("b", { id: "streak-longest" }, longest), "longest streak"), h("div", {}, h("b", {}, days.size), "days with entries"));
}

function renderBars(selector, counts) {
  const rows = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]).slice(0, 12), top = rows.length ? rows[0][1] : 1;
  fill(selector, rows.length ? rows.map(([name, n]) => {
    const bar = h("span", { class: "bar" });
    bar.style.width = Math.max(1, 50 * n / top).toFixed(1) + "%";
    return h("div", {}, h("span", { class: "label", title: name }, name), bar, h("span", {}, n));
  }) : [h("p", { class: "muted" }, "—")]);
}
