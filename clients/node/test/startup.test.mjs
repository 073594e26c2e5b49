// A zot that refuses to start says why on stderr; the client's error says
// it too, wherever stderr goes.

import assert from "node:assert/strict";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { ZotClient, ZotError } from "../index.js";
import { guard, tempDir, zotBin } from "./helpers.mjs";

const REASON = "no API key for anthropic: set ANTHROPIC_API_KEY";

test("a start without a key fails with zot's reason, not only the exit code", async (t) => {
  /** @type {string[]} */
  const seen = [];
  /** @type {[string, "ignore" | "inherit" | ((text: string) => void)][]} */
  const cases = [
    ["a function", (text) => seen.push(text)],
    ["ignore", "ignore"],
  ];
  for (const [name, stderr] of cases) {
    const home = join(tempDir(t), "home");
    mkdirSync(home);
    /** @type {Record<string, string | undefined>} */
    const env = { ZOT_HOME: home, ZOTCORE_RPC_TOKEN: undefined };
    for (const k of Object.keys(process.env)) if (k.endsWith("_API_KEY")) env[k] = undefined;
    for (const k of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"]) env[k] = undefined;
    const client = new ZotClient({ bin: zotBin, args: ["--provider", "anthropic", "--cwd", tempDir(t)], env, stderr });
    await client.start();
    await assert.rejects(
      guard(client.ping(), "ping of a zot that exits"),
      (err) =>
        err instanceof ZotError &&
        err.code === "process_exited" &&
        err.message.includes(REASON) &&
        err.message.includes("code 1"),
      `stderr ${name}`,
    );
    await assert.rejects(client.prompt("hello").collect(), (err) => err instanceof ZotError && err.message.includes(REASON));
    if (name === "a function") assert.match(seen.join(""), new RegExp(REASON), "stderr still reaches the caller");
    await client.close();
  }
});

test("without bin the client runs $ZOT_BIN, else zot on PATH, else says how to give it one", async (t) => {
  const saved = { ZOT_BIN: process.env.ZOT_BIN, PATH: process.env.PATH };
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const ping = async () => {
    const client = new ZotClient({ args: ["--provider", "scripted", "--cwd", tempDir(t)], env: { ZOT_HOME: tempDir(t) }, stderr: "ignore" });
    try {
      await client.start();
      await guard(client.ping(), "ping");
    } finally {
      await client.close();
    }
  };
  process.env.ZOT_BIN = zotBin;
  process.env.PATH = tempDir(t);
  await ping();

  delete process.env.ZOT_BIN;
  const dir = tempDir(t);
  symlinkSync(zotBin, join(dir, "zot"));
  process.env.PATH = dir;
  await ping();

  process.env.PATH = tempDir(t);
  await assert.rejects(
    ping(),
    (err) => err instanceof ZotError && err.code === "spawn_failed" && err.message === "zot not found: pass bin, set ZOT_BIN, or put zot on PATH",
  );
});
