/// `GET /dashboard`: one self-contained page (inline CSS and script, nothing fetched from
/// elsewhere, no build step) over the API. It holds no data itself: it asks for a bearer key
/// once (kept in the browser's localStorage) and every call it makes carries it; the change
/// stream and the recordings' player use a media token (LifeLogAPI+MediaToken).
enum Dashboard {
    /// Only this page's own inline script and style, and calls back to this node.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        + "connect-src 'self'; media-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static var page: String { head + "<script>\n" + script + "\n</script>\n</body>\n</html>\n" }

    static let head = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>LifeSync dashboard</title>
    <style>
    :root { --bg: #f5f4f0; --card: #fff; --ink: #222; --muted: #6b6b6b; --line: #e2e0da; --accent: #2f6f9f; --warn: #b5532b; }
    * { box-sizing: border-box; }
    body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--ink); }
    header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 10px 18px; background: #1f2d3a; color: #fff; }
    header h1 { font-size: 17px; margin: 0 12px 0 0; }
    header .node { color: #b8c7d4; font-size: 12px; }
    header .spacer { flex: 1; }
    #live { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #44566a; }
    #live.on { background: #2e7d4f; } #live.poll { background: #8a6d1f; }
    button { font: inherit; border: 1px solid var(--line); background: #fff; border-radius: 6px; padding: 4px 10px; cursor: pointer; }
    header button { background: transparent; color: #fff; border-color: #5d7184; }
    main { display: grid; grid-template-columns: minmax(320px, 1.3fr) minmax(300px, 1fr); gap: 14px; padding: 14px 18px; }
    @media (max-width: 860px) { main { grid-template-columns: 1fr; } }
    .card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; min-width: 0; }
    .card h2 { font-size: 14px; margin: 0 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
    .column { display: flex; flex-direction: column; gap: 14px; min-width: 0; }
    #filters { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 8px; }
    #filters select, #filters input { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; }
    #search { flex: 1; min-width: 140px; }
    .day { margin: 10px 0 4px; font-weight: 600; border-bottom: 1px solid var(--line); padding-bottom: 2px; }
    .entry { display: flex; gap: 8px; padding: 4px 0; align-items: baseline; flex-wrap: wrap; }
    .entry .time { color: var(--muted); font-variant-numeric: tabular-nums; width: 42px; flex: none; }
    .badge { font-size: 11px; padding: 1px 7px; border-radius: 9px; background: #e7eef5; color: #2a4d6b; }
    .tag { font-size: 11px; color: var(--accent); }
    .muted { color: var(--muted); font-size: 12px; }
    .metric { font-weight: 600; }
    #charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 10px; }
    .chart h3 { font-size: 13px; margin: 0 0 2px; }
    svg { display: block; width: 100%; height: auto; }
    .bars div { display: flex; align-items: center; gap: 6px; margin: 2px 0; font-size: 12px; }
    .bars .label { width: 90px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .bars .bar { height: 10px; background: var(--accent); border-radius: 3px; }
    .split { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
    .streaks { display: flex; gap: 18px; }
    .streaks b { font-size: 26px; display: block; }
    table { border-collapse: collapse; width: 100%; font-size: 12px; }
    td, th { text-align: left; padding: 3px 4px; border-bottom: 1px solid var(--line); vertical-align: top; }
    audio { width: 100%; height: 32px; margin-top: 4px; }
    .recording { padding: 6px 0; border-bottom: 1px solid var(--line); }
    .conflict { padding: 6px 0; border-bottom: 1px solid var(--line); font-size: 12px; }
    .conflict code { background: #f4efe9; padding: 0 3px; border-radius: 3px; }
    #login { max-width: 420px; margin: 12vh auto; }
    #login input { width: 100%; font: inherit; padding: 8px; margin: 8px 0; border: 1px solid var(--line); border-radius: 6px; }
    .error { color: var(--warn); }
    </style>
    </head>
    <body>
    <section id="login" class="card" hidden>
      <h2>LifeSync dashboard</h2>
      <p>Enter an API key of this node (<code>lifesync keys create dashboard</code> makes one). It is kept in this browser only.</p>
      <form id="login-form"><input id="key" type="password" autocomplete="off" placeholder="lsk_…"><button type="submit">Open</button></form>
      <p id="login-error" class="error"></p>
    </section>
    <div id="app" hidden>
      <header>
        <h1>LifeSync</h1><span class="node" id="node"></span><span class="spacer"></span>
        <span id="live">connecting</span><button id="forget" type="button">Forget key</button>
      </header>
      <main>
        <div class="column">
          <section class="card"><h2>Timeline</h2>
            <div id="filters"><select id="category-filter"><option value="">All categories</option></select>
              <input id="search" type="search" placeholder="Search text, tags, places"></div>
            <div id="summary" class="muted"></div><div id="timeline"></div></section>
        </div>
        <div class="column">
          <section class="card"><h2>Metrics</h2><div id="charts"></div></section>
          <section class="card"><h2>Streaks</h2><div id="streaks" class="streaks"></div></section>
          <section class="card split"><div><h2>By category</h2><div id="by-category" class="bars"></div></div>
            <div><h2>By source</h2><div id="by-source" class="bars"></div></div></section>
          <section class="card"><h2>Places</h2><div id="map"></div></section>
          <section class="card"><h2>Recordings</h2><div id="recordings"></div></section>
          <section class="card"><h2>Conflicts</h2><div id="conflicts"></div></section>
          <section class="card"><h2>Peers</h2><div id="peers"></div></section>
        </div>
      </main>
    </div>

    """#
}

extension LifeLogAPI {
    static func dashboardPage() -> HTTPResponse {
        var response = HTTPResponse(status: 200, body: Array(Dashboard.page.utf8))
        response.headers.set("Content-Type", "text/html; charset=utf-8")
        response.headers.set("Content-Security-Policy", Dashboard.contentSecurityPolicy)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Referrer-Policy", "no-referrer")
        response.headers.set("Cache-Control", "no-cache")
        return response
    }
}
