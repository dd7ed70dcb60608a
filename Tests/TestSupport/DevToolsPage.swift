import Foundation
import LifeSyncRuntime

/// A headless Chromium driven over the DevTools protocol: started with its own profile folder,
/// one page attached, commands sent and answered in order. `close()` (also on deinit) ends the
/// browser whatever state it is in.
package final class DevToolsPage {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        init(_ text: String) { description = text }
    }

    /// The browser binary, if one is installed.
    package static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    let process: Subprocess
    let socket: WebSocketClient
    private var nextID = 0
    /// Uncaught script errors the page reported (Runtime.exceptionThrown).
    package private(set) var exceptions: [String] = []
    /// Console messages of level error.
    package private(set) var consoleErrors: [String] = []

    package init(profile: String, log: String) throws {
        guard let binary = Self.chromium else { throw Failure("chromium is not installed") }
        process = try Subprocess(binary, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                                          "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir=" + profile,
                                          "--window-size=1280,1500", "about:blank"], standardOutput: log)
        do {
            // Chromium writes the port it took and the browser's path once it listens.
            var lines: [String] = []
            for _ in 0..<300 where lines.count < 2 {
                if let text = try? String(contentsOfFile: profile + "/DevToolsActivePort", encoding: .utf8) {
                    lines = text.split(separator: "\n").map(String.init)
                }
                if lines.count < 2 { guard process.poll() == nil else { throw Failure("chromium exited: see \(log)") }; usleep(100_000) }
            }
            guard lines.count >= 2, let port = UInt16(lines[0]) else { throw Failure("no DevToolsActivePort within 30 s") }
            let browser = try WebSocketClient(port: port, path: lines[1])
            socket = browser
            let targets = try command("Target.getTargets")
            let pages = ((targets["targetInfos"] as? [[String: Any]]) ?? []).filter { $0["type"] as? String == "page" }
            guard let target = pages.first?["targetId"] as? String else { throw Failure("no page target: \(targets)") }
            let attached = try command("Target.attachToTarget", ["targetId": target, "flatten": true])
            guard let session = attached["sessionId"] as? String else { throw Failure("not attached: \(attached)") }
            self.session = session
            _ = try command("Page.enable")
            _ = try command("Runtime.enable")
        } catch {
            process.terminate(grace: 3)
            throw error
        }
    }

    private var session: String?

    deinit { close() }

    package func close() {
        if process.poll() == nil {
            _ = try? socket.send(text: #"{"id":999999,"method":"Browser.close"}"#)
            process.terminate(grace: 5)
        }
    }

    /// Sends a command (to the page once attached) and returns its result; events read meanwhile
    /// are noted (script errors), others dropped.
    @discardableResult
    package func command(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        nextID += 1
        var message: [String: Any] = ["id": nextID, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        try socket.send(text: String(decoding: try JSONSerialization.data(withJSONObject: message), as: UTF8.self))
        for _ in 0..<100_000 {
            let text = try socket.receive()
            guard let reply = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { continue }
            if let id = reply["id"] as? Int, id == nextID {
                if let error = reply["error"] { throw Failure("\(method): \(error)") }
                return reply["result"] as? [String: Any] ?? [:]
            }
            note(reply)
        }
        throw Failure("\(method): no answer among 100000 messages")
    }

    private func note(_ event: [String: Any]) {
        let params = event["params"] as? [String: Any] ?? [:]
        switch event["method"] as? String {
        case "Runtime.exceptionThrown":
            let details = params["exceptionDetails"] as? [String: Any] ?? [:]
            exceptions.append("\((details["exception"] as? [String: Any])?["description"] ?? details["text"] ?? "?")")
        case "Runtime.consoleAPICalled" where params["type"] as? String == "error":
            consoleErrors.append("\(((params["args"] as? [[String: Any]]) ?? []).map { $0["value"] ?? $0["description"] ?? "" })")
        default:
            break
        }
    }

    /// The value of a JavaScript expression (awaited if it is a promise).
    package func evaluate(_ expression: String) throws -> Any? {
        let result = try command("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let thrown = result["exceptionDetails"] { throw Failure("\(expression.prefix(80)): \(thrown)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Polls `expression` until it is true, at most `timeout` seconds; whether it became true.
    package func waitUntil(_ expression: String, timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        for _ in 0..<10_000 {
            if try evaluate(expression) as? Bool == true { return true }
            if Date() > deadline { return false }
            usleep(100_000)
        }
        return false
    }

    package func navigate(_ url: String) throws { try command("Page.navigate", ["url": url]) }

    /// Lays the page out as a screen `width` × `height` CSS pixels shows it (`mobile`: as a
    /// phone does, with its viewport meta tag and touch).
    package func setViewport(width: Int, height: Int, mobile: Bool) throws {
        _ = try command("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile])
    }

    /// A PNG of the page as it is drawn now: all of it, or (`wholePage` false) what the viewport shows.
    package func screenshot(to path: String, wholePage: Bool = true) throws {
        let shot = try command("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": wholePage])
        guard let base64 = shot["data"] as? String, let data = Data(base64Encoded: base64) else { throw Failure("no screenshot data") }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
