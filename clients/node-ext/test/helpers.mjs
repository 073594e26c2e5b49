// Shared helpers of the zot-ext tests: extension folders that import
// zot-ext, driven through `zot rpc --provider scripted --ext <dir>` with
// the Node client of clients/node (a test-only dependency). node --test
// also loads this file as a test file; it defines no tests.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { ZotClient } from "../../node/index.js";

/** The package's directory, clients/node-ext. */
export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The zot binary under test: $ZOT_BIN, else ../../bin/zot from the package directory. */
export const zotBin = process.env.ZOT_BIN || resolve(packageDir, "../../bin/zot");

/** Only a guard against hangs; it times nothing. */
export const HANG_GUARD_MS = 60_000;

/** A fresh temporary directory, removed when the test ends. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "zot-node-ext-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Writes an extension folder whose program is source (an ES module that
 * imports zot-ext, found in the folder's node_modules) and returns it.
 */
export function extension(t, name, source) {
  const folder = join(tempDir(t), name);
  mkdirSync(join(folder, "node_modules"), { recursive: true });
  symlinkSync(packageDir, join(folder, "node_modules", "zot-ext"));
  writeFileSync(join(folder, "extension.json"), JSON.stringify({ name, version: "1.0.0", exec: "./main.mjs", language: "javascript" }));
  writeFileSync(join(folder, "main.mjs"), `#!${process.execPath}\n${source}`);
  chmodSync(join(folder, "main.mjs"), 0o755);
  return folder;
}

/**
 * Starts `zot rpc --provider scripted --ext folder` with a zot home of its
 * own; closed when the test ends. Returns the client, every event it saw
 * (routed or not), and a reader of the extension's log.
 */
export async function open(t, folder, script) {
  const dir = tempDir(t);
  const home = join(dir, "home");
  const work = join(dir, "work");
  mkdirSync(home);
  mkdirSync(work);
  const args = ["--provider", "scripted", "--cwd", work, "--ext", folder];
  if (script) {
    writeFileSync(join(dir, "script.json"), JSON.stringify(script));
    args.push("--script", join(dir, "script.json"));
  }
  const stderr = [];
  const client = new ZotClient({ bin: zotBin, args, env: { ZOTCORE_RPC_TOKEN: undefined, ZOT_HOME: home }, stderr: (s) => stderr.push(s) });
  const events = [];
  const badLines = [];
  client.on("event", (ev) => events.push(ev));
  client.on("protocolError", (line) => badLines.push(line));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.close();
    assert.deepEqual(badLines, [], `stdout carried non-JSON lines; stderr: ${stderr.join("")}`);
  };
  t.after(close);
  await client.start();
  const log = () => {
    try {
      return readFileSync(join(home, "logs", `ext-${JSON.parse(readFileSync(join(folder, "extension.json"), "utf8")).name}.log`), "utf8");
    } catch {
      return "";
    }
  };
  return { client, events, log, close, work };
}

/** Waits until cond returns something truthy, and returns it. */
export async function waitFor(what, cond) {
  const deadline = Date.now() + HANG_GUARD_MS;
  for (;;) {
    const got = await cond();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits until the client's extensions finished their handshakes, and returns them. */
export function ready(client) {
  return waitFor("the handshakes", async () => {
    const { extensions } = await client.getExtensions();
    return extensions.every((e) => e.state !== "starting") && extensions;
  });
}

/** The text of a tool_result event. */
export const resultText = (ev) => ev.content.filter((b) => b.type === "text").map((b) => b.text).join("");
