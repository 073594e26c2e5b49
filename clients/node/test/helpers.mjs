// Shared helpers of the client tests. node --test also loads this file as
// a test file (it lies under test/); it defines no tests. Its one side
// effect: the zot processes of the tests that import it get a scratch zot
// home, so no test touches the user's.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { ZotClient } from "../index.js";

/** The client's directory, clients/node. */
export const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

// Every zot a test starts inherits this scratch zot home (a test may still
// give its own in the client's env). It is removed when the process exits.
const scratchHome = mkdtempSync(join(tmpdir(), "zot-node-home-"));
process.env.ZOT_HOME = scratchHome;
process.on("exit", () => rmSync(scratchHome, { recursive: true, force: true }));

/** The zot binary under test: $ZOT_BIN, else ../../bin/zot from the client directory. */
export const zotBin = process.env.ZOT_BIN || resolve(clientDir, "../../bin/zot");

/** Only a guard against hangs; it times nothing. */
export const HANG_GUARD_MS = 60_000;

/**
 * A fresh temporary directory, removed when the test ends.
 * @param {import("node:test").TestContext} t
 */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "zot-node-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Writes a scripted-provider script and returns its path.
 * @param {import("node:test").TestContext} t
 * @param {object} script
 */
export function writeScript(t, script) {
  const path = join(tempDir(t), "script.json");
  writeFileSync(path, JSON.stringify(script));
  return path;
}

/**
 * Starts `zot rpc --provider scripted` in a fresh directory. The client is
 * closed when the test ends, and the test fails if stdout carried a line
 * that is not a JSON object.
 * @param {import("node:test").TestContext} t
 * @param {{args?: string[], env?: Record<string, string | undefined>}} [options]
 */
export async function openClient(t, options = {}) {
  const stderr = [];
  const client = new ZotClient({
    bin: zotBin,
    args: ["--provider", "scripted", "--cwd", tempDir(t), ...(options.args ?? [])],
    env: { ZOTCORE_RPC_TOKEN: undefined, ...options.env },
    stderr: (text) => stderr.push(text),
  });
  const badLines = [];
  client.on("protocolError", (line) => badLines.push(line));
  t.after(async () => {
    await client.close();
    assert.deepEqual(badLines, [], `stdout carried non-JSON lines; stderr: ${stderr.join("")}`);
  });
  await client.start();
  return client;
}

/**
 * Rejects when p takes longer than the hang guard.
 * @template T
 * @param {Promise<T>} p
 * @param {string} what
 * @returns {Promise<T>}
 */
export async function guard(p, what) {
  let timer;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang guard: ${what}`)), HANG_GUARD_MS);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The types of a list of events, for readable assertions.
 * @param {{type: string}[]} events
 */
export function types(events) {
  return events.map((e) => e.type);
}

/**
 * The text of a list of events' text deltas.
 * @param {{type: string, delta?: string}[]} events
 */
export function textOf(events) {
  return events
    .filter((e) => e.type === "text_delta")
    .map((e) => e.delta)
    .join("");
}
