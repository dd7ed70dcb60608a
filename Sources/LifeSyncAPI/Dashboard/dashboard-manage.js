"use strict";
// What the dashboard manages, through the API with the CLI's rules (the node applies them):
// a quick note or mood (POST /api/entries), a conflict's resolution (POST
// /api/conflicts/ENTRY/resolve, as `lifesync conflicts resolve`), and API keys (GET/POST
// /api/keys, DELETE /api/keys/NAME, as `lifesync keys`; these need an admin key). Also the
// recordings and peers lists.

function drawSide() {
  once("recordings", [state.recordings, !!state.token], renderRecordings);
  once("conflicts", state.conflicts, renderConflicts);
  once("peers", state.status && state.status.peers, renderPeers);
}

function say(selector, text, ok) { const el = $(selector); el.textContent = text; el.className = ok ? "ok" : "error"; }

async function addEntry(entry, what) {
  try {
    const made = await api("/api/entries", { method: "POST", json: entry });
    say("#quick-status", what + " added (" + shortID(made.id) + ")", true);
    refreshSoon();
    return true;
  } catch (error) { if (error.message !== "unauthorized") say("#quick-status", what + " refused: " + error.message); return false; }
}

function renderRecordings() {
  const list = state.recordings || [];
  fill("#recordings", list.length ? list.map((r) => h("div", { class: "recording" },
    h("div", {}, h("strong", {}, r.file_name), " ", h("span", { class: "muted" }, r.media_type + " · " + r.size + " bytes · " + r.state)),
    r.path && state.token
      ? h("audio", { controls: "", preload: "none", src: "/api/recordings/" + encodeURIComponent(r.id) + "/content?token=" + encodeURIComponent(state.token) })
      : h("div", { class: "muted" }, r.path ? "" : "not held on this node"))) : [h("p", { class: "muted" }, "No recordings.")]);
}

function renderConflicts() {
  const list = state.conflicts || [];
  const who = (side) => (side.name || shortID(side.node_id) || side.origin.slice(0, 8)) + (side.role ? " (" + side.role + ")" : "");
  const what = (c) => { const e = c.winner.current || c.loser.entry;
    return e ? new Date(e.timestamp).toLocaleString() + " · " + (e.category || "—") + " · " + summary(e).slice(0, 60) : c.entry_id; };
  const resolve = (c, body, label) => h("button", { type: "button", "data-keep": body.keep, "data-field": body.field, onclick: async (event) => {
    event.target.disabled = true;
    try {
      await api("/api/conflicts/" + encodeURIComponent(c.entry_id) + "/resolve", { method: "POST", json: { ...body, loser: c.loser.node_id || c.loser.origin } });
      refreshSoon();
    } catch (error) { if (error.message !== "unauthorized") { event.target.disabled = false; event.target.title = error.message; event.target.classList.add("error"); } }
  } }, label);
  fill("#conflicts", list.length ? list.map((c) => h("div", { class: "conflict", "data-entry": c.entry_id },
    h("div", {}, h("strong", {}, what(c))),
    h("div", {}, who(c.loser), " lost to ", who(c.winner), " ", h("code", { title: c.entry_id }, shortID(c.entry_id))),
    c.fields.map((f) => h("div", { class: "muted" }, f.field + ": now ", h("code", {}, JSON.stringify(f.winner)), " · lost ", h("code", {}, JSON.stringify(f.loser)))),
    h("div", { class: "actions" }, resolve(c, { keep: "winner" }, "Keep what stands"), resolve(c, { keep: "loser" }, "Keep " + who(c.loser) + "'s"),
      c.fields.length > 1 && !c.loser.deleted && !c.winner.deleted
        ? c.fields.map((f) => resolve(c, { keep: "loser", field: f.field }, "Take its " + f.field)) : []))) :
    [h("p", { class: "muted" }, "No conflicts.")]);
}

function renderPeers() {
  const peers = (state.status && state.status.peers) || [];
  fill("#peers", peers.length ? h("table", {}, h("tr", {}, ["peer", "state", "last sync", "pending"].map((t) => h("th", {}, t))),
    peers.map((p) => h("tr", {}, h("td", { title: p.node_id }, (p.name || shortID(p.node_id)) + " (" + p.role + ")"), h("td", {}, p.state),
      h("td", {}, p.last_sync ? new Date(p.last_sync).toLocaleString() : "—"), h("td", {}, p.pending)))) :
    h("p", { class: "muted" }, "No peers connected."));
}

async function loadKeys() {
  try {
    const keys = await api("/api/keys");
    $("#key-form").hidden = false;
    fill("#keys", keys.length ? keys.map((k) => h("div", { class: "key", "data-name": k.name },
      h("div", {}, h("strong", {}, k.name), k.admin ? " · admin" : "", " ", h("code", {}, k.key_sha256_prefix + "…")),
      h("div", { class: "muted" }, "created " + new Date(k.created_at).toLocaleString() + " · last used " + (k.last_used ? new Date(k.last_used).toLocaleString() : "never")),
      h("div", { class: "actions" }, h("button", { type: "button", class: "revoke", onclick: async () => {
        if (!confirm("Revoke the key \u201c" + k.name + "\u201d? Requests bearing it are refused from now on.")) return;
        try { await api("/api/keys/" + encodeURIComponent(k.name), { method: "DELETE" }); say("#key-made", "revoked " + k.name, true); loadKeys(); }
        catch (error) { if (error.message !== "unauthorized") say("#key-made", error.message); }
      } }, "Revoke")))) : [h("p", { class: "muted" }, "No keys.")]);
  } catch (error) {
    if (error.status !== 403) return;
    $("#key-form").hidden = true;
    fill("#keys", h("p", { class: "muted" }, "Managing keys needs an admin key (lifesync keys create NAME --admin); this one is not."));
  }
}

function bootManage() {
  $("#mood-value").addEventListener("input", () => { $("#mood-shown").textContent = $("#mood-value").value; });
  $("#quick-note").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("#note-text").value.trim();
    if (!text) { say("#quick-status", "Write the note first."); return; }
    if (await addEntry({ category: "note", source: "dashboard", data: { text } }, "Note")) $("#note-text").value = "";
  });
  $("#quick-mood").addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = Number($("#mood-value").value);
    await addEntry({ category: "mood", source: "dashboard", data: { metric: { name: "mood", value, scale_min: 1, scale_max: 10 } } }, "Mood " + value);
  });
  $("#key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = $("#key-name").value.trim();
    try {
      const made = await api("/api/keys", { method: "POST", json: { name, admin: $("#key-admin").checked } });
      $("#key-name").value = "";
      fill("#key-made", "Key \u201c" + made.name + "\u201d (shown only now): ", h("code", { id: "new-key" }, made.key));
      $("#key-made").className = "ok";
      loadKeys();
    } catch (error) { if (error.message !== "unauthorized") say("#key-made", error.message); }
  });
}
