// The package as npm would publish it: its manifest, exactly the files its
// tarball holds, and that the tarball, installed offline into a new
// project, runs a prompt when imported by its name.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { clientDir, guard, tempDir, zotBin } from "./helpers.mjs";

const run = promisify(execFile);

/** What the tarball must hold, and nothing else. */
const PACKED = [
  "README.md",
  "acp/index.d.ts",
  "acp/index.js",
  "acp/protocol.js",
  "acp/types.d.ts",
  "acp/websocket.js",
  "index.d.ts",
  "index.js",
  "lines.js",
  "package.json",
  "types.d.ts",
];

/**
 * Runs npm without touching the network or the user's npm cache.
 * @param {import("node:test").TestContext} t
 * @param {string[]} args
 * @param {string} cwd
 */
function npm(t, args, cwd) {
  const env = {
    ...process.env,
    npm_config_cache: tempDir(t),
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_offline: "true",
  };
  return guard(run("npm", args, { cwd, env }), `npm ${args.join(" ")}`);
}

test("package.json says what publishing needs", () => {
  const pkg = JSON.parse(readFileSync(join(clientDir, "package.json"), "utf8"));
  assert.equal(pkg.private, undefined, "a private package cannot be published");
  assert.equal(pkg.name, "zot-client");
  assert.match(pkg.version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/);
  assert.equal(typeof pkg.license, "string");
  assert.equal(pkg.type, "module");
  assert.equal(pkg.types, "index.d.ts");
  assert.deepEqual(pkg.exports["."], { types: "./index.d.ts", default: "./index.js" });
  assert.deepEqual(pkg.exports["./types"], { types: "./types.d.ts" });
  assert.deepEqual(pkg.exports["./acp"], { types: "./acp/index.d.ts", default: "./acp/index.js" });
  assert.equal(pkg.engines.node, ">=18");
  assert.deepEqual(pkg.dependencies ?? {}, {}, "no runtime dependencies");
});

test("npm pack holds exactly the client, its types, README and manifest", async (t) => {
  const { stdout } = await npm(t, ["pack", "--dry-run", "--json"], clientDir);
  const [report] = JSON.parse(stdout);
  assert.deepEqual(report.files.map((/** @type {{path: string}} */ f) => f.path).sort(), PACKED);
});

test("the packed tarball, installed offline, runs a prompt by its package name", async (t) => {
  const dest = tempDir(t);
  const { stdout } = await npm(t, ["pack", "--json", "--pack-destination", dest], clientDir);
  const tarball = join(dest, JSON.parse(stdout)[0].filename);
  const project = tempDir(t);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "probe", private: true, type: "module" }));
  await npm(t, ["install", "--no-package-lock", "--ignore-scripts", tarball], project);
  writeFileSync(
    join(project, "probe.mjs"),
    `import { ZotClient } from "zot-client";
const client = new ZotClient({ bin: process.argv[2], args: ["--provider", "scripted", "--cwd", process.argv[3]], env: { ZOTCORE_RPC_TOKEN: undefined } });
await client.start();
await client.prompt("list the files").collect();
let text = "";
for await (const ev of client.prompt("hello")) if (ev.type === "text_delta") text += ev.delta;
await client.close();
console.log(text);
`,
  );
  const probe = await guard(run(process.execPath, ["probe.mjs", zotBin, project], { cwd: project }), "probe");
  assert.equal(probe.stdout.trim(), "You said: hello");
});
