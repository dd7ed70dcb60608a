/// `GET /dashboard`: a page over the API, as web files (Sources/LifeSyncAPI/Dashboard/)
/// compiled into the binary, served from `/dashboard` and `/dashboard/FILE`; nothing is fetched
/// from elsewhere, and there is no build step. The files hold no data: the page asks for a bearer
/// key once (kept in the browser's localStorage) and every call it makes carries it; the change
/// stream and the recordings' player use a media token (LifeLogAPI+MediaToken).
import LifeSyncHTTP

enum Dashboard {
    /// Only this node's own scripts and styles, and calls back to it.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; "
        + "connect-src 'self'; media-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// Each file by the name it is served under, with its media type.
    static let files: [String: (bytes: [UInt8], type: String)] = [
        "": (PackageResources.index_html, "text/html; charset=utf-8"),
        "dashboard.css": (PackageResources.dashboard_css, "text/css; charset=utf-8"),
        "dashboard.js": (PackageResources.dashboard_js, "text/javascript; charset=utf-8"),
        "dashboard-charts.js": (PackageResources.dashboard_charts_js, "text/javascript; charset=utf-8"),
        "dashboard-map.js": (PackageResources.dashboard_map_js, "text/javascript; charset=utf-8"),
        "dashboard-manage.js": (PackageResources.dashboard_manage_js, "text/javascript; charset=utf-8"),
        // Natural Earth's 1:110m countries (public domain), made by .ci/world-outline.py.
        "world.json": (PackageResources.world_json, "application/json"),
    ]
}

extension LifeLogAPI {
    /// The dashboard file `name` ("" for the page), or nil.
    static func dashboardFile(_ name: String) -> HTTPResponse? {
        guard let file = Dashboard.files[name] else { return nil }
        var response = HTTPResponse(status: 200, body: file.bytes)
        response.headers.set("Content-Type", file.type)
        response.headers.set("Content-Security-Policy", Dashboard.contentSecurityPolicy)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Referrer-Policy", "no-referrer")
        response.headers.set("Cache-Control", "no-cache")
        return response
    }
}
