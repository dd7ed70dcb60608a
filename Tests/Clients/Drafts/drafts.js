// Runs a Drafts action under node, with the parts of Drafts' scripting API it uses: UUID.make(),
// draft (content, tags, uuid, createdAt), device.model, HTTP.create().request (synchronous, as in
// Drafts; here through curl), app.displaySuccessMessage / displayErrorMessage, context.fail().
//
//     node drafts.js ACTION.js DRAFT.json API_URL API_KEY [EDITS.json]
//
// Only the action's two constants are changed (apiURL, apiKey), as README tells a user to; EDITS
// is a list of [line as written, line instead] for README's other suggested edits. Prints one
// JSON line: what the action showed and the HTTP status it got.
"use strict";
const fs = require("fs");
const crypto = require("crypto");
const { spawnSync } = require("child_process");

const [actionPath, draftPath, apiURL, apiKey, editsPath] = process.argv.slice(2);
let source = fs.readFileSync(actionPath, "utf8");
const replaceLine = (pattern, line) => {
  if (!pattern.test(source)) throw new Error("the action has no line matching " + pattern);
  source = source.replace(pattern, line);
};
replaceLine(/^const apiURL = .*$/m, "const apiURL = " + JSON.stringify(apiURL) + ";");
replaceLine(/^const apiKey = .*$/m, "const apiKey = " + JSON.stringify(apiKey) + ";");
for (const [written, instead] of editsPath ? JSON.parse(fs.readFileSync(editsPath, "utf8")) : []) {
  if (!source.includes(written)) throw new Error("the action has no line " + written);
  source = source.replace(written, instead);
}

const stored = JSON.parse(fs.readFileSync(draftPath, "utf8"));
const shown = { success: null, error: null, failed: false, status: null };
const sandbox = {
  UUID: { make: () => crypto.randomUUID().toUpperCase() },
  draft: { content: stored.content, tags: stored.tags, uuid: stored.uuid, createdAt: new Date(stored.createdAt) },
  device: { model: "iPhone" },
  HTTP: {
    create: () => ({
      request: ({ url, method, headers, data }) => {
        const bodyFile = require("os").tmpdir() + "/drafts-response-" + process.pid;
        const args = ["-sS", "--max-time", "15", "-o", bodyFile, "-w", "%{http_code}", "-X", method, url];
        for (const [name, value] of Object.entries(headers || {})) args.push("-H", name + ": " + value);
        if (data !== undefined) args.push("--data-binary", typeof data === "string" ? data : JSON.stringify(data));
        const run = spawnSync("curl", args, { encoding: "utf8", timeout: 20000 });
        const statusCode = Number(run.stdout);
        const responseText = fs.existsSync(bodyFile) ? fs.readFileSync(bodyFile, "utf8") : "";
        if (fs.existsSync(bodyFile)) fs.unlinkSync(bodyFile);
        shown.status = statusCode;
        shown.body = responseText || run.stderr;
        return { statusCode, responseText, success: statusCode >= 200 && statusCode < 300 };
      },
    }),
  },
  app: {
    displaySuccessMessage: (message) => { shown.success = message; },
    displayErrorMessage: (message) => { shown.error = message; },
  },
  context: { fail: () => { shown.failed = true; } },
};
new Function(...Object.keys(sandbox), source)(...Object.values(sandbox));
console.log(JSON.stringify(shown));
