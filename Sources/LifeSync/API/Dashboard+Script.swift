extension Dashboard {
    /// The page's behaviour: load through the API, draw with the DOM and inline SVG (text is
    /// only ever set as text, never parsed as HTML), follow the change stream, or poll when the
    /// node has none.
    static let script = #"""
    "use strict";
    const PAGE = 1000, MAX_ENTRIES = 20000, POLL_MS = 4000, SIDE_MS = 10000, SHOWN = 400;
    const $ = (selector) => document.querySelector(selector);
    const state = { key: localStorage.getItem("lifesync.key") || "", entries: new Map(), status: null, recordings: [], conflicts: [],
                    token: null, drawn: {} };
    let source = null, pollTimer = null, sideTimer = null, renderTimer = null;
    // A device or entry as a person tells them apart: phone_ce2c2334-… → phone_ce2c2334.
    const shortID = (id) => id ? id.replace(/^([a-z]+_[0-9a-f]{8}).*$/, "$1") : "";
    // An entry's first words: its text, else its metric, else its place.
    const summary = (e) => { const d = e.data || {}; return d.text || (d.metric ? d.metric.name + " " + d.metric.value : "") || (d.location && d.location.place_name) || ""; };

    function build(make, tag, attrs, children) {
      const el = make(tag);
      for (const [name, value] of Object.entries(attrs || {})) {
        if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
        else if (name === "class") el.setAttribute("class", value);
        else el.setAttribute(name, value);
      }
      for (const child of children.flat()) if (child != null && child !== false) el.append(child instanceof Node ? child : String(child));
      return el;
    }
    const h = (tag, attrs, ...children) => build((t) => document.createElement(t), tag, attrs, children);
    const s = (tag, attrs, ...children) => build((t) => document.createElementNS("http://www.w3.org/2000/svg", t), tag, attrs, children);
    const fill = (selector, ...children) => $(selector).replaceChildren(...children.flat());

    async function api(path, options = {}) {
      const response = await fetch(path, { ...options, headers: { ...(options.headers || {}), Authorization: "Bearer " + state.key } });
      if (response.status === 401) {
        const body = await response.json().catch(() => ({}));
        forget("The node refused the key: " + (body.error || "401"));
        throw new Error("unauthorized");
      }
      if (!response.ok) throw new Error(path + " answered " + response.status);
      return response.json();
    }

    function showLogin(message) {
      $("#app").hidden = true; $("#login").hidden = false;
      $("#login-error").textContent = message || ""; $("#key").focus();
    }

    function forget(message) {
      localStorage.removeItem("lifesync.key"); state.key = ""; stopLive();
      clearInterval(sideTimer); sideTimer = null; showLogin(message);
    }

    function setLive(text, kind) { const el = $("#live"); el.textContent = text; el.className = kind || ""; }

    async function loadEntries() {
      const all = new Map();
      for (let offset = 0; offset < MAX_ENTRIES; offset += PAGE) {
        const page = await api("/api/entries?limit=" + PAGE + "&offset=" + offset);
        for (const entry of page) all.set(entry.id, entry);
        if (page.length < PAGE) break;
      }
      state.entries = all;
    }

    async function loadSide() {
      const [status, recordings, conflicts] = await Promise.all([api("/api/status"), api("/api/recordings"), api("/api/conflicts")]);
      Object.assign(state, { status, recordings, conflicts });
    }

    async function start() {
      $("#login").hidden = true; $("#app").hidden = false;
      try {
        await Promise.all([loadEntries(), loadSide()]);
        render();
        await startLive();
      } catch (error) { if (error.message !== "unauthorized") setLive("error: " + error.message); }
      if (!sideTimer) sideTimer = setInterval(() => loadSide().then(queueRender).catch(() => {}), SIDE_MS);
    }

    function stopLive() {
      if (source) { source.close(); source = null; }
      clearInterval(pollTimer); pollTimer = null;
    }

    function startPolling(why) {
      stopLive();
      setLive("polling every " + POLL_MS / 1000 + " s", "poll"); $("#live").title = why;
      pollTimer = setInterval(() => loadEntries().then(queueRender).catch(() => {}), POLL_MS);
    }

    /// The change stream (Server-Sent Events) with a media token; polling if the node has none.
    async function startLive() {
      stopLive();
      try { state.token = (await api("/api/media-token", { method: "POST" })).token; }
      catch (error) { if (error.message !== "unauthorized") startPolling("no media token: " + error.message); return; }
      queueRender();
      let opened = false;
      const stream = new EventSource("/api/changes/stream?token=" + encodeURIComponent(state.token));
      source = stream;
      stream.addEventListener("open", () => { opened = true; setLive("live", "on"); });
      stream.addEventListener("change", (event) => {
        let change;
        try { change = JSON.parse(event.data); } catch { return; }
        if (change.entry) state.entries.set(change.entry.id, change.entry);
        else if (change.id) state.entries.delete(change.id);
        queueRender();
      });
      stream.addEventListener("error", () => {
        if (stream !== source) return;
        if (stream.readyState !== EventSource.CLOSED) { setLive("reconnecting"); return; }
        // Closed for good: an expired token (make another) or a node without the stream.
        if (opened) setTimeout(() => { if (source === stream) startLive(); }, 2000);
        else startPolling("the change stream is not available on this node");
      });
    }

    function queueRender() { if (!renderTimer) renderTimer = setTimeout(() => { renderTimer = null; render(); }, 60); }

    const dayOf = (iso) => { const d = new Date(iso); return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0"); };
    const timeOf = (iso) => { const d = new Date(iso); return String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0"); };
    const number = (v) => Math.abs(v) >= 100 ? v.toFixed(0) : String(Math.round(v * 100) / 100);

    function matches(entry, category, words) {
      if (category && (entry.category || "") !== category) return false;
      if (!words.length) return true;
      const d = entry.data || {};
      const hay = [d.text, entry.category, entry.source, ...(d.tags || []), d.metric && d.metric.name, d.location && d.location.place_name]
        .filter(Boolean).join(" ").toLowerCase();
      return words.every((w) => hay.includes(w));
    }

    function render() {
      const st = state.status;
      if (st) $("#node").textContent = (st.name || shortID(st.node_id)) + " · " + st.role + " · " + state.entries.size + " entries";
      const all = [...state.entries.values()].sort((a, b) => a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0);
      renderCategories(all);
      const category = $("#category-filter").value;
      const words = $("#search").value.toLowerCase().split(/\s+/).filter(Boolean);
      const shown = all.filter((e) => matches(e, category, words));
      renderTimeline(shown, all.length);
      renderCharts(shown);
      renderStreaks(shown);
      renderBars("#by-category", shown, (e) => e.category || "(none)");
      renderBars("#by-source", shown, (e) => e.source || "(none)");
      renderMap(shown);
      once("recordings", [state.recordings, state.token], renderRecordings);
      once("conflicts", state.conflicts, renderConflicts);
      once("peers", st && st.peers, renderPeers);
    }

    /// Redraws a section only when its data changed (a playing <audio> is not cut off).
    function once(name, data, draw) {
      const key = JSON.stringify(data === undefined ? null : data);
      if (state.drawn[name] === key) return;
      state.drawn[name] = key; draw();
    }

    function renderCategories(all) {
      const select = $("#category-filter"), chosen = select.value;
      const names = [...new Set(all.map((e) => e.category).filter(Boolean))].sort();
      once("categories", names, () => {
        select.replaceChildren(h("option", { value: "" }, "All categories"), ...names.map((n) => h("option", { value: n }, n)));
        select.value = names.includes(chosen) ? chosen : "";
      });
    }

    function renderTimeline(shown, total) {
      fill("#summary", shown.length === total ? total + " entries" : shown.length + " of " + total + " entries");
      const out = [];
      let day = null;
      for (const entry of shown.slice(0, SHOWN)) {
        const d = dayOf(entry.timestamp);
        if (d !== day) { day = d; out.push(h("div", { class: "day" }, new Date(entry.timestamp).toDateString())); }
        const data = entry.data || {}, m = data.metric, loc = data.location;
        out.push(h("div", { class: "entry", "data-id": entry.id },
          h("span", { class: "time" }, timeOf(entry.timestamp)),
          entry.category && h("span", { class: "badge" }, entry.category),
          data.text && h("span", {}, data.text),
          m && h("span", { class: "metric" }, m.name + " " + number(m.value) + (m.scale_max != null ? "/" + number(m.scale_max) : "") + (m.unit ? " " + m.unit : "")),
          loc && h("span", { class: "muted" }, "@ " + (loc.place_name || loc.latitude.toFixed(3) + ", " + loc.longitude.toFixed(3))),
          ...(data.tags || []).map((t) => h("span", { class: "tag" }, "#" + t)),
          h("span", { class: "muted" }, entry.source)));
      }
      if (shown.length > SHOWN) out.push(h("p", { class: "muted" }, (shown.length - SHOWN) + " more: narrow the filter or search"));
      if (!shown.length) out.push(h("p", { class: "muted" }, "No entries" + (total ? " match." : " yet.")));
      fill("#timeline", out);
    }

    function renderCharts(shown) {
      const series = new Map();
      for (const e of shown) {
        const m = e.data && e.data.metric;
        if (!m || typeof m.value !== "number") continue;
        if (!series.has(m.name)) series.set(m.name, { points: [], metric: m });
        series.get(m.name).points.push([Date.parse(e.timestamp), m.value]);
      }
      const charts = [...series.entries()].sort((a, b) => b[1].points.length - a[1].points.length).slice(0, 12).map(([name, { points, metric }]) => {
        points.sort((a, b) => a[0] - b[0]);
        const W = 240, H = 110, L = 30, R = 8, T = 8, B = 18;
        const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
        let lo = Math.min(...ys, metric.scale_min != null ? metric.scale_min : Infinity), hi = Math.max(...ys, metric.scale_max != null ? metric.scale_max : -Infinity);
        if (lo === hi) { lo -= 1; hi += 1; }
        const x0 = Math.min(...xs), x1 = Math.max(...xs) === x0 ? x0 + 1 : Math.max(...xs);
        const px = (t) => L + (W - L - R) * (t - x0) / (x1 - x0), py = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
        const line = points.map((p) => px(p[0]).toFixed(1) + "," + py(p[1]).toFixed(1)).join(" ");
        const last = points[points.length - 1][1];
        return h("div", { class: "chart" }, h("h3", {}, name + " ", h("span", { class: "muted" }, "last " + number(last) + " · " + points.length + " points")),
          s("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": name + " over time", "data-metric": name },
            s("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#ccc" }), s("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#ccc" }),
            s("text", { x: L - 4, y: T + 8, "text-anchor": "end", "font-size": 9, fill: "#777" }, number(hi)),
            s("text", { x: L - 4, y: H - B, "text-anchor": "end", "font-size": 9, fill: "#777" }, number(lo)),
            s("text", { x: L, y: H - 4, "font-size": 9, fill: "#777" }, new Date(x0).toLocaleDateString()),
            s("text", { x: W - R, y: H - 4, "text-anchor": "end", "font-size": 9, fill: "#777" }, new Date(x1).toLocaleDateString()),
            points.length > 1 && s("polyline", { points: line, fill: "none", stroke: "#2f6f9f", "stroke-width": 1.6 }),
            points.map((p) => s("circle", { cx: px(p[0]).toFixed(1), cy: py(p[1]).toFixed(1), r: 2.4, fill: "#2f6f9f" },
              s("title", {}, new Date(p[0]).toLocaleString() + ": " + number(p[1]))))));
      });
      fill("#charts", charts.length ? charts : [h("p", { class: "muted" }, "No metrics yet (entries with data.metric).")]);
    }

    function renderStreaks(shown) {
      const days = new Set(shown.map((e) => dayOf(e.timestamp)));
      const step = (d, n) => { const x = new Date(d + "T12:00:00"); x.setDate(x.getDate() + n); return dayOf(x.toISOString()); };
      let current = 0, cursor = dayOf(new Date().toISOString());
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

    function renderBars(selector, shown, key) {
      const counts = new Map();
      for (const e of shown) counts.set(key(e), (counts.get(key(e)) || 0) + 1);
      const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12), top = rows.length ? rows[0][1] : 1;
      fill(selector, rows.length ? rows.map(([name, n]) => h("div", {}, h("span", { class: "label", title: name }, name),
        h("span", { class: "bar", style: "width:" + Math.max(2, 120 * n / top).toFixed(0) + "px" }), h("span", {}, n))) : [h("p", { class: "muted" }, "—")]);
    }

    /// Equirectangular: x from longitude, y from latitude, fitted to the points' box (no tiles).
    function renderMap(shown) {
      const points = shown.filter((e) => e.data && e.data.location).map((e) => ({ lat: e.data.location.latitude, lon: e.data.location.longitude, e }));
      if (!points.length) { fill("#map", h("p", { class: "muted" }, "No locations yet (entries with data.location).")); return; }
      let [w, e, so, n] = [Math.min(...points.map((p) => p.lon)), Math.max(...points.map((p) => p.lon)), Math.min(...points.map((p) => p.lat)), Math.max(...points.map((p) => p.lat))];
      const pad = Math.max(0.01, (e - w) * 0.1, (n - so) * 0.1);
      w = Math.max(-180, w - pad); e = Math.min(180, e + pad); so = Math.max(-90, so - pad); n = Math.min(90, n + pad);
      const W = 320, H = Math.max(120, Math.min(260, W * (n - so) / (e - w)));
      const px = (lon) => W * (lon - w) / (e - w), py = (lat) => H * (n - lat) / (n - so);
      const grid = [], stepDeg = Math.pow(10, Math.floor(Math.log10(Math.max(e - w, n - so)))) / 2;
      for (let g = Math.ceil(w / stepDeg) * stepDeg, i = 0; g <= e && i < 40; g += stepDeg, i++) grid.push(s("line", { x1: px(g), y1: 0, x2: px(g), y2: H, stroke: "#e6e3dc" }));
      for (let g = Math.ceil(so / stepDeg) * stepDeg, i = 0; g <= n && i < 40; g += stepDeg, i++) grid.push(s("line", { x1: 0, y1: py(g), x2: W, y2: py(g), stroke: "#e6e3dc" }));
      fill("#map", s("svg", { viewBox: "0 0 " + W + " " + H.toFixed(0), role: "img", "aria-label": "places", id: "map-svg" },
        s("rect", { x: 0, y: 0, width: W, height: H, fill: "#eef3f6" }), grid,
        points.map((p) => s("circle", { cx: px(p.lon).toFixed(1), cy: py(p.lat).toFixed(1), r: 4, fill: "#b5532b", "fill-opacity": 0.75 },
          s("title", {}, (p.e.data.location.place_name || "") + " " + p.lat.toFixed(4) + ", " + p.lon.toFixed(4) + " · " + new Date(p.e.timestamp).toLocaleString()))),
        // Names beside the points while there are few enough to read.
        points.length <= 30 && [...new Map(points.map((p) => [p.e.data.location.place_name || "", p])).values()].filter((p) => p.e.data.location.place_name)
          .map((p) => { const right = px(p.lon) > W * 0.7;  // near the right edge the name goes left of its point
            return s("text", { x: (px(p.lon) + (right ? -6 : 6)).toFixed(1), y: (py(p.lat) + 3).toFixed(1), "text-anchor": right ? "end" : "start",
                               "font-size": 9, fill: "#5a3a2a" }, p.e.data.location.place_name); })),
        h("div", { class: "muted" }, points.length + " points · " + so.toFixed(2) + "…" + n.toFixed(2) + "° N, " + w.toFixed(2) + "…" + e.toFixed(2) + "° E"));
    }

    function renderRecordings() {
      const list = state.recordings || [];
      fill("#recordings", list.length ? list.map((r) => h("div", { class: "recording" },
        h("div", {}, h("b", {}, r.file_name), " ", h("span", { class: "muted" }, r.media_type + " · " + (r.size / 1024).toFixed(1) + " KiB · " + r.state)),
        r.path && state.token && /^(audio|video)\//.test(r.media_type)
          ? h("audio", { controls: "", preload: "none", src: "/api/recordings/" + encodeURIComponent(r.id) + "/content?token=" + encodeURIComponent(state.token) })
          : h("div", { class: "muted" }, r.path ? "" : "not held on this node"))) : [h("p", { class: "muted" }, "No recordings.")]);
    }

    function renderConflicts() {
      const list = state.conflicts || [];
      const who = (side) => (side.name || shortID(side.node_id) || side.origin.slice(0, 8)) + (side.role ? " (" + side.role + ")" : "");
      const what = (c) => { const e = c.winner.current || c.loser.entry; return e ? new Date(e.timestamp).toLocaleString() + " · " + (e.category || "—") + " · " + summary(e).slice(0, 60) : c.entry_id; };
      fill("#conflicts", list.length ? list.map((c) => h("div", { class: "conflict" },
        h("div", {}, h("strong", {}, what(c))),
        h("div", {}, who(c.loser), " lost to ", who(c.winner), " ", h("code", { title: c.entry_id }, shortID(c.entry_id))),
        c.fields.map((f) => h("div", { class: "muted" }, f.field + ": now ", h("code", {}, JSON.stringify(f.winner)), " · lost ", h("code", {}, JSON.stringify(f.loser)))))) :
        [h("p", { class: "muted" }, "No conflicts.")]);
    }

    function renderPeers() {
      const peers = (state.status && state.status.peers) || [];
      fill("#peers", peers.length ? h("table", {}, h("tr", {}, ["peer", "state", "last sync", "pending"].map((t) => h("th", {}, t))),
        peers.map((p) => h("tr", {}, h("td", { title: p.node_id }, (p.name || shortID(p.node_id)) + " (" + p.role + ")"), h("td", {}, p.state),
          h("td", {}, p.last_sync ? new Date(p.last_sync).toLocaleString() : "—"), h("td", {}, p.pending)))) :
        h("p", { class: "muted" }, "No peers connected."));
    }

    $("#login-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      state.key = $("#key").value.trim();
      if (!state.key) return;
      try { await api("/api/status"); } catch (error) { if (error.message !== "unauthorized") $("#login-error").textContent = error.message; return; }
      localStorage.setItem("lifesync.key", state.key); $("#key").value = ""; start();
    });
    $("#forget").addEventListener("click", () => forget(""));
    $("#category-filter").addEventListener("change", render);
    $("#search").addEventListener("input", queueRender);
    if (state.key) start(); else showLogin("");
    """#
}
