"use strict";
// Places on a map a person recognises, offline: the coasts and borders of Natural Earth's
// 1:110m countries (public domain; /dashboard/world.json, fetched from this node only when the
// map comes into view), drawn in SVG in an equirectangular projection whose x is scaled by the
// cosine of the middle latitude, zoomed to the points' box; each point labelled with its
// place_name, the chosen day's points joined in time order, and a small world map locating the
// view. Nothing is loaded from anywhere else.

let world = null, worldWanted = false, mapArgs = null;

function wantWorld() {
  if (worldWanted) return;
  worldWanted = true;
  fetch("/dashboard/world.json").then((r) => r.json()).then((data) => {
    world = data.rings.map((ring) => {
      let w = 180, e = -180, so = 90, n = -90;
      for (let i = 0; i < ring.length; i += 2) { w = Math.min(w, ring[i]); e = Math.max(e, ring[i]); so = Math.min(so, ring[i + 1]); n = Math.max(n, ring[i + 1]); }
      return { ring, box: [w, e, so, n] };
    });
    if (mapArgs) renderMap(...mapArgs);
  }).catch(() => { worldWanted = false; });
}

/// Fetches the map's outline once the Places card is on screen (or about to be), watched from
/// the first render on (before it, every card is empty and all of them are in view).
function watchMap() {
  const card = $("#places-card");
  if (worldWanted) return;
  if (!("IntersectionObserver" in window)) { wantWorld(); return; }
  const watcher = new IntersectionObserver((seen) => { if (seen.some((x) => x.isIntersecting)) { wantWorld(); watcher.disconnect(); } }, { rootMargin: "200px" });
  watcher.observe(card);
}

/// `recent`: the last 30 days' places (null: not asked for); `day`: the chosen day's entries.
function renderMap(recent, day) {
  mapArgs = [recent, day];
  const byID = new Map();
  for (const e of [...(recent || []), ...(day || [])]) if (e.data && e.data.location) byID.set(e.id, e);
  const points = [...byID.values()].map((e) => ({ lat: e.data.location.latitude, lon: e.data.location.longitude, e }));
  const path = (day || []).filter((e) => e.data && e.data.location).sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
  once("map", [points.map((p) => p.e.id), path.map((e) => e.id), !!world, !!recent], () => drawMap(points, path, !!recent));
}

/// Shows the last 30 days' places too (or only the chosen day's again).
function monthButton(shown) {
  return h("button", { type: "button", id: "places-month", onclick: async () => {
    if (shown) state.places = null; else await loadPlaces().catch(() => {});
    renderMap(state.places, state.dayEntries);
  } }, shown ? "Only the chosen day" : "Places of the last 30 days");
}

function drawMap(points, path, month) {
  if (!points.length) {
    fill("#map", h("p", { class: "muted" }, month ? "No places in the last 30 days (entries with data.location)." : "No places on the chosen day."), monthButton(month));
    return;
  }
  let w = Math.min(...points.map((p) => p.lon)), e = Math.max(...points.map((p) => p.lon));
  let so = Math.min(...points.map((p) => p.lat)), n = Math.max(...points.map((p) => p.lat));
  const span = Math.max(0.02, (e - w) * 1.25, (n - so) * 1.25), midLon = (w + e) / 2, midLat = (so + n) / 2;
  w = midLon - span / 2; e = midLon + span / 2; so = Math.max(-85, midLat - span / 2); n = Math.min(85, midLat + span / 2);
  const k = Math.cos(midLat * Math.PI / 180), W = 320, H = Math.round(Math.max(160, Math.min(300, W * (n - so) / ((e - w) * k))));
  const px = (lon) => W * (lon - w) / (e - w), py = (lat) => H * (n - lat) / (n - so);
  const land = world ? world.filter((r) => r.box[1] >= w && r.box[0] <= e && r.box[3] >= so && r.box[2] <= n)
    .map((r) => s("path", { d: ringPath(r.ring, px, py), class: "land", fill: "#e4dfcf", stroke: "#b9b09a", "stroke-width": 0.6 })) : [];
  const named = points.length <= 40 ? [...new Map(points.filter((p) => p.e.data.location.place_name).map((p) => [p.e.data.location.place_name, p])).values()] : [];
  const route = path.map((e2) => px(e2.data.location.longitude).toFixed(1) + "," + py(e2.data.location.latitude).toFixed(1)).join(" ");
  fill("#map", s("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "places", id: "map-svg" },
      s("rect", { x: 0, y: 0, width: W, height: H, fill: world ? "#cfe0ec" : "#eef3f6" }), land,
      path.length > 1 && s("polyline", { id: "day-path", points: route, fill: "none", stroke: "#2f6f9f", "stroke-width": 2, "stroke-dasharray": "5 3",
                                         "data-points": path.length }),
      points.map((p) => s("circle", { cx: px(p.lon).toFixed(1), cy: py(p.lat).toFixed(1), r: 4, fill: "#b5532b", "fill-opacity": 0.8, stroke: "#fff", "stroke-width": 1 },
        s("title", {}, (p.e.data.location.place_name || "") + " " + p.lat.toFixed(4) + ", " + p.lon.toFixed(4) + " · " + new Date(p.e.timestamp).toLocaleString()))),
      scaleBar(W, H, (e - w) * 111.32 * k),
      named.map((p) => { const right = px(p.lon) > W * 0.65;  // near the right edge the name goes left of its point
        return s("text", { x: (px(p.lon) + (right ? -6 : 6)).toFixed(1), y: (py(p.lat) + 3).toFixed(1), "text-anchor": right ? "end" : "start",
                           "font-size": 10, fill: "#3d2a1f", class: "place" }, p.e.data.location.place_name); })),
    h("div", { class: "legend muted" }, h("span", {}, points.length + (points.length === 1 ? " place" : " places") + (month ? ", last 30 days" : ", the chosen day")),
      h("span", { id: "path-legend" }, path.length ? "the day's path: " + path.length + (path.length === 1 ? " point, " : " points, ") + timeOf(path[0].timestamp) + "–" + timeOf(path[path.length - 1].timestamp)
                                                   : "no places on the chosen day"),
      h("span", {}, so.toFixed(2) + "…" + n.toFixed(2) + "° N, " + w.toFixed(2) + "…" + e.toFixed(2) + "° E"), monthButton(month)),
    world ? locator(w, e, so, n) : h("p", { class: "muted" }, "Loading the world outline…"));
}

/// A bar of a round distance (1, 2 or 5 × a power of ten, km or m) near a quarter of the width.
function scaleBar(W, H, kmAcross) {
  const target = kmAcross / 4, power = Math.pow(10, Math.floor(Math.log10(target)));
  const km = [5, 2, 1].map((m) => m * power).find((d) => d <= target) || power, length = W * km / kmAcross;
  const text = km >= 1 ? km + " km" : Math.round(km * 1000) + " m";
  return s("g", { class: "scale" }, s("rect", { x: 8, y: H - 12, width: length.toFixed(1), height: 3, fill: "#333" }),
    s("text", { x: 8, y: H - 16, "font-size": 9, fill: "#333" }, text));
}

function ringPath(ring, px, py) {
  let d = "";
  for (let i = 0; i < ring.length; i += 2) d += (i ? "L" : "M") + px(ring[i]).toFixed(1) + " " + py(ring[i + 1]).toFixed(1);
  return d + "Z";
}

/// A small world map (60° N to 60° S, all longitudes) with the view's box on it.
function locator(w, e, so, n) {
  const W = 180, H = 80, px = (lon) => W * (lon + 180) / 360, py = (lat) => H * (70 - lat) / 130;
  return s("svg", { viewBox: "0 0 " + W + " " + H, id: "map-inset", role: "img", "aria-label": "where on Earth", width: W },
    s("rect", { x: 0, y: 0, width: W, height: H, fill: "#cfe0ec" }),
    world.filter((r) => r.box[3] > -60 && r.ring.length > 40).map((r) => s("path", { d: ringPath(r.ring, px, py), fill: "#d6cfba" })),
    s("rect", { x: px(w) - 2, y: py(n) - 2, width: Math.max(4, px(e) - px(w) + 4), height: Math.max(4, py(so) - py(n) + 4),
                fill: "none", stroke: "#b5532b", "stroke-width": 1.5 }));
}
