// The package as npm would publish it: its manifest, exactly the files its
// tarball holds, and that the tarball, installed offline into an
// extension's folder, serves zot when imported by its name.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { open, packageDir, resultText, tempDir } from "./helpers.mjs";

const run = promisify(execFile);

/** What the tarball must hold, and nothing else. */
const PACKED = ["README.md", "index.d.ts", "index.js", "package.json", "types.d.ts"];

/** Runs npm without touching the network or the user's npm cache. */
function npm(t, args, cwd) {
  const env = {
    ...process.env,
    npm_config_cache: tempDir(t),
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_offline: "true",
  };
  return run("npm", args, { cwd, env });
}

test("package.json says what publishing needs", () => {
  const pkg = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  assert.equal(pkg.private, undefined, "a private package cannot be published");
  assert.equal(pkg.name, "zot-ext");
  assert.match(pkg.version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/);
  assert.equal(pkg.type, "module");
  assert.deepEqual(pkg.exports["."], { types: "./index.d.ts", default: "./index.js" });
  assert.deepEqual(pkg.exports["./types"], { types: "./types.d.ts" });
  assert.equal(pkg.engines.node, ">=18");
  assert.deepEqual(pkg.dependencies ?? {}, {}, "no runtime dependencies");
});

test("npm pack holds exactly the package, its types, README and manifest", async (t) => {
  const { stdout } = await npm(t, ["pack", "--dry-run", "--json"], packageDir);
  assert.deepEqual(JSON.parse(stdout)[0].files.map((f) => f.path).sort(), PACKED);
});

test("the packed tarball, installed offline into an extension, serves zot", async (t) => {
  const dest = tempDir(t);
  const { stdout } = await npm(t, ["pack", "--json", "--pack-destination", dest], packageDir);
  const tarball = join(dest, JSON.parse(stdout)[0].filename);
  const folder = join(tempDir(t), "installed");
  mkdirSync(folder);
  writeFileSync(join(folder, "package.json"), JSON.stringify({ name: "installed", private: true, type: "module" }));
  await npm(t, ["install", "--no-package-lock", "--ignore-scripts", tarball], folder);
  writeFileSync(join(folder, "extension.json"), JSON.stringify({ name: "installed", exec: "./main.mjs" }));
  writeFileSync(
    join(folder, "main.mjs"),
    `#!${process.execPath}
import { createRequire } from "node:module";
import { Extension } from "zot-ext";
const ext = new Extension("installed", "1.0.0");
ext.tool("where", "Where zot-ext comes from.", () => createRequire(import.meta.url).resolve("zot-ext"));
await ext.run();
`,
  );
  chmodSync(join(folder, "main.mjs"), 0o755);
  const { client } = await open(t, folder, { turns: [{ steps: [{ tool_calls: [{ name: "where", args: {} }] }, { text: "ok" }] }] });
  const got = await client.prompt("where?").collect();
  const [result] = got.filter((e) => e.type === "tool_result");
  assert.equal(result.is_error, false, resultText(result));
  assert.ok(resultText(result).startsWith(`${folder}/node_modules/zot-ext/`), resultText(result));
});
