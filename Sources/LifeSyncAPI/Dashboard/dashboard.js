"use strict";
// The dashboard's core: the key, calls to the API, the day, the paged journal and the live
// change stream. A page costs what it shows: the journal is read a page at a time with the API's
// own filters, counts and the charts' daily averages come from /api/entries/stats, the map shows
// the chosen day (the last 30 days' places on request), and the change stream starts at the
// node's latest change (never replayed from the start).
// Text is only ever set as text, never parsed as HTML. The other files draw charts, the map,
// and what the page manages (conflicts, keys, quick add).
const PAGE_SIZE = 50, RECENT_DAYS = 30, RECENT_PAGES = 5, POLL_MS = 4000, SIDE_MS = 10000;
const $ = (selector) => document.querySelector(selector);
const state = { key: localStorage.getItem("lifesync.key") || "", status: null, stats: null, month: null, places: null, dayEntries: [],
                recordings: [], conflicts: [], page: 0, cursors: [null], token: null, drawn: {} };
let source = null, pollTimer = null, sideTimer = null, refreshTimer = null;

function build(make, tag, attrs, children) {
  const el = make(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value);
  }
  for (const child of children.flat()) if (child != null && child !== false) el.append(child instanceof Node ? child : String(child));
  return el;
}
const h = (tag, attrs, ...children) => build((t) => document.createElement(t), tag, attrs, children);
const s = (tag, attrs, ...children) => build((t) => document.createElementNS("http://www.w3.org/2000/svg", t), tag, attrs, children);
const fill = (selector, ...children) => $(selector).replaceChildren(...children.flat());
// A device or entry as a person tells them apart: phone_ce2c2334-… → phone_ce2c2334.
const shortID = (id) => id ? id.replace(/^([a-z]+_[0-9a-f]{8}).*$/, "$1") : "";
// An entry's first words: its text, else its metric, else its place.
const summary = (e) => { const d = e.data || {}; return d.text || (d.metric ? d.metric.name + " " + d.metric.value : "") || (d.location && d.location.place_name) || ""; };
const number = (v) => Math.abs(v) >= 100 ? v.toFixed(0) : String(Math.round(v * 100) / 100);
const pad2 = (n) => String(n).padStart(2, "0");
const dayOf = (time) => { const d = new Date(time); return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()); };
const timeOf = (iso) => { const d = new Date(iso); return pad2(d.getHours()) + ":" + pad2(d.getMinutes()); };
const stepDay = (day, n) => { const d = new Date(day + "T12:00:00"); d.setDate(d.getDate() + n); return dayOf(d); };
// A local day as the API's filters take it: from its first to its last millisecond, in UTC.
// The browser's offset east of UTC now, minutes: the API's stats count its days with it.
const utcOffset = () => -new Date().getTimezoneOffset();
const dayRange = (day) => { const start = new Date(day + "T00:00:00"), end = new Date(day + "T00:00:00"); end.setDate(end.getDate() + 1);
  return "since=" + encodeURIComponent(start.toISOString()) + "&until=" + encodeURIComponent(new Date(end - 1).toISOString()); };
// Where the page after `entry` starts (the API's keyset cursor, `before`): its time and ID.
const after = (entry) => entry.timestamp + "," + entry.id;
const query = (params) => Object.entries(params).filter(([, v]) => v !== "" && v != null).map(([k, v]) => k + "=" + encodeURIComponent(v)).join("&");

async function api(path, options = {}) {
  const init = { ...options, headers: { ...(options.headers || {}), Authorization: "Bearer " + state.key } };
  if (options.json !== undefined) { init.body = JSON.stringify(options.json); init.headers["Content-Type"] = "application/json"; }
  const response = await fetch(path, init);
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) { forget("The node refused the key: " + (body.error || "401")); throw new Error("unauthorized"); }
  if (!response.ok) { const error = new Error(body.error || path + " answered " + response.status); error.status = response.status; error.body = body; throw error; }
  return body;
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

/// Redraws a section only when its data changed (a playing <audio> is not cut off).
function once(name, data, draw) {
  const key = JSON.stringify(data === undefined ? null : data);
  if (state.drawn[name] === key) return;
  state.drawn[name] = key; draw();
}

async function loadStatus() {
  state.status = await api("/api/status");
  const st = state.status;
  $("#node").textContent = (st.name || shortID(st.node_id)) + " · " + st.role + " · " + st.entries + " entries";
  $("#node").title = st.node_id;
}

/// Counts over the whole journal and each metric's daily averages over the last 30 days: the
/// node's own stats, a few KB whatever the journal holds.
async function loadOverview() {
  const since = new Date(Date.now() - RECENT_DAYS * 86400000).toISOString();
  const utc_offset = utcOffset();
  [state.stats, state.month] = await Promise.all([api("/api/entries/stats?" + query({ utc_offset })),
                                                  api("/api/entries/stats?" + query({ since, per_day: "true", utc_offset }))]);
  if (state.places) await loadPlaces();
  drawOverview();
}

/// The last 30 days' places, on request (the map's button): at most RECENT_PAGES pages of 1,000.
async function loadPlaces() {
  const since = new Date(Date.now() - RECENT_DAYS * 86400000).toISOString();
  const places = [];
  for (let page = 0, before = null; page < RECENT_PAGES; page++) {
    const list = await api("/api/entries?" + query({ since, has: "location", limit: 1000, before }));
    places.push(...list);
    if (list.length < 1000) break;
    before = after(list[list.length - 1]);
  }
  state.places = places;
}

function drawOverview() {
  const stats = state.stats || { by_category: {}, by_source: {}, by_day: {} };
  const select = $("#category-filter"), chosen = select.value, names = Object.keys(stats.by_category).filter((n) => n !== "(none)").sort();
  once("categories", names, () => {
    select.replaceChildren(h("option", { value: "" }, "All categories"), ...names.map((n) => h("option", { value: n }, n)));
    select.value = names.includes(chosen) ? chosen : "";
  });
  renderCharts((state.month && state.month.metrics_by_day) || {});
  renderStreaks(stats.by_day);
  renderBars("#by-category", stats.by_category);
  renderBars("#by-source", stats.by_source);
  renderMap(state.places, state.dayEntries);
}

/// The chosen day: its counts and metric averages (the node's stats over that day), and its
/// entries for the map's path (a day's worth, at most 1,000).
async function loadDay() {
  const day = $("#day").value || dayOf(Date.now());
  const [stats, entries] = await Promise.all([api("/api/entries/stats?" + dayRange(day)), api("/api/entries?" + dayRange(day) + "&limit=1000")]);
  if (($("#day").value || dayOf(Date.now())) !== day) return;  // another day was chosen meanwhile
  state.dayEntries = entries;
  const metrics = Object.entries(stats.metrics || {});
  fill("#today", h("div", { class: "big" },
      h("div", {}, h("b", { id: "day-total" }, stats.total), stats.total === 1 ? "entry" : "entries"),
      metrics.slice(0, 4).map(([name, m]) => h("div", {}, h("b", {}, number(m.average)), name + " (avg of " + m.count + ")"))),
    h("div", { class: "muted" }, Object.entries(stats.by_category).map(([k, v]) => k + " " + v).join(" · ") || "Nothing written this day."));
  renderMap(state.places, entries);
}

/// One page of the journal, newest first, filtered by the node (category, full-text search). A
/// page starts after the last entry of the one before it (`state.cursors`, the API's `before`),
/// not at an offset: deep pages cost what the first does, and entries written meanwhile shift
/// nothing (a new entry shows on the first page).
async function loadJournal() {
  const category = $("#category-filter").value, search = $("#search").value.trim(), page = state.page;
  const list = await api("/api/entries?" + query({ category, search, limit: PAGE_SIZE + 1, before: state.cursors[page] }));
  if (page !== state.page) return;  // another page was asked for meanwhile
  const shown = list.slice(0, PAGE_SIZE), more = list.length > PAGE_SIZE;
  state.cursors.length = page + 1;
  if (more) state.cursors.push(after(shown[shown.length - 1]));
  const first = state.page * PAGE_SIZE;
  fill("#summary", shown.length ? "entries " + (first + 1) + "–" + (first + shown.length) + (category || search ? " matching" : "") : "");
  fill("#page", "page " + (state.page + 1));
  $("#newer").disabled = state.page === 0; $("#older").disabled = !more;
  const out = [];
  let day = null;
  for (const entry of shown) {
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
  if (!shown.length) out.push(h("p", { class: "muted" }, category || search ? "No entries match." : "No entries yet."));
  fill("#timeline", out);
}

async function loadSide() {
  const [recordings, conflicts] = await Promise.all([api("/api/recordings"), api("/api/conflicts"), loadStatus()]);
  Object.assign(state, { recordings, conflicts });
  drawSide();
}

/// After a change: what shows it again, each bounded (a page, a day, the stats, 30 days).
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    Promise.all([loadJournal(), loadDay(), loadOverview(), loadSide()]).catch(() => {});
  }, 300);
}

async function start() {
  $("#login").hidden = true; $("#app").hidden = false;
  if (!$("#day").value) $("#day").value = dayOf(Date.now());
  try {
    await loadStatus();
    await Promise.all([loadJournal(), loadDay(), loadOverview(), loadSide(), loadKeys()]);
    watchMap();
    await startLive();
  } catch (error) { if (error.message !== "unauthorized") setLive("error: " + error.message); }
  if (!sideTimer) sideTimer = setInterval(() => loadSide().catch(() => {}), SIDE_MS);
}

function stopLive() {
  if (source) { source.close(); source = null; }
  clearInterval(pollTimer); pollTimer = null;
}

function startPolling(why) {
  stopLive();
  setLive("polling every " + POLL_MS / 1000 + " s", "poll"); $("#live").title = why;
  pollTimer = setInterval(refreshSoon, POLL_MS);
}

/// The change stream (Server-Sent Events) from the latest change, with a media token; polling
/// (of what the page shows, not the journal) if the node has none.
async function startLive() {
  stopLive();
  try { state.token = (await api("/api/media-token", { method: "POST" })).token; }
  catch (error) { if (error.message !== "unauthorized") startPolling("no media token: " + error.message); return; }
  drawSide();
  let opened = false;
  const stream = new EventSource("/api/changes/stream?" + query({ token: state.token, since: state.status && state.status.change_cursor }));
  source = stream;
  stream.addEventListener("open", () => { opened = true; setLive("live", "on"); });
  stream.addEventListener("change", () => refreshSoon());
  stream.addEventListener("error", () => {
    if (stream !== source) return;
    if (stream.readyState !== EventSource.CLOSED) { setLive("reconnecting"); return; }
    // Closed for good: an expired token (make another) or a node without the stream.
    if (opened) setTimeout(() => { if (source === stream) loadStatus().then(startLive).catch(() => {}); }, 2000);
    else startPolling("the change stream is not available on this node");
  });
}

function boot() {
  $("#login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    state.key = $("#key").value.trim();
    if (!state.key) return;
    try { await api("/api/status"); } catch (error) { if (error.message !== "unauthorized") $("#login-error").textContent = error.message; return; }
    localStorage.setItem("lifesync.key", state.key);
    start();
  });
  $("#forget").addEventListener("click", () => forget("Key forgotten."));
  const journal = () => loadJournal().catch(() => {});
  const restart = () => { state.page = 0; state.cursors = [null]; journal(); };
  $("#category-filter").addEventListener("change", restart);
  let typing = null;
  $("#search").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(restart, 250); });
  $("#older").addEventListener("click", () => { if (state.cursors.length > state.page + 1) { state.page++; journal(); } });
  $("#newer").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); journal(); });
  const day = (n) => { $("#day").value = stepDay($("#day").value || dayOf(Date.now()), n); loadDay().catch(() => {}); };
  $("#day-prev").addEventListener("click", () => day(-1));
  $("#day-next").addEventListener("click", () => day(1));
  $("#day").addEventListener("change", () => loadDay().catch(() => {}));
  bootManage();
  if (state.key) start(); else showLogin();
}

window.addEventListener("DOMContentLoaded", boot);
