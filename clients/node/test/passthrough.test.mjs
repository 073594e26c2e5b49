// Behaviour a real zot does not show today, checked against a small fake
// server: events and fields of a newer protocol pass through unchanged,
// frames arrive split at every byte, CRLF line ends are accepted.

import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { ZotClient } from "../index.js";
import { guard, tempDir } from "./helpers.mjs";

// The fake answers ping and prompt. Its prompt events are written one
// byte per write, so the client sees lines and UTF-8 characters cut at
// every position.
const FAKE = `
const out = (s) => new Promise((resolve) => process.stdout.write(s, resolve));
const sleep = () => new Promise((resolve) => setTimeout(resolve, 1));
let buf = "";
let work = Promise.resolve();
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\\n")) >= 0) {
    const cmd = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    work = work.then(() => answer(cmd));
  }
});
async function answer(cmd) {
  if (cmd.type === "ping") {
    await out(JSON.stringify({ type: "response", id: cmd.id, command: "ping", success: true, data: { pong: true, load: 0.5 } }) + "\\r\\n");
    await out(JSON.stringify({ type: "ext_notify", seq: 1, extension: "x", level: "info", message: "unrouted" }) + "\\n");
    return;
  }
  await out(JSON.stringify({ type: "response", id: cmd.id, command: "prompt", success: true, data: { started: true, lane: "fast" } }) + "\\n");
  const events = [
    { type: "future_event", seq: 2, prompt_id: cmd.id, payload: { nested: [1, { deep: true }] } },
    { type: "text_delta", seq: 3, prompt_id: cmd.id, delta: "é中😀\\u2028x", confidence: 0.9 },
    { type: "done", seq: 4, prompt_id: cmd.id },
  ];
  const bytes = Buffer.from(events.map((e) => JSON.stringify(e) + "\\n").join(""), "utf8");
  for (let i = 0; i < bytes.length; i++) {
    await out(bytes.subarray(i, i + 1));
    if (i % 7 === 0) await sleep();
  }
}
`;

test("unknown events and fields pass through; split frames are reassembled", async (t) => {
  const dir = tempDir(t);
  const bin = join(dir, "fake-zot");
  writeFileSync(bin, `#!${process.execPath}\n${FAKE}`);
  chmodSync(bin, 0o755);

  const client = new ZotClient({ bin, stderr: "inherit" });
  const bad = [];
  const all = [];
  client.on("protocolError", (line) => bad.push(line));
  client.on("event", (ev) => all.push(ev));
  t.after(() => client.close());
  await client.start();

  assert.deepEqual(await guard(client.ping(), "ping"), { pong: true, load: 0.5 });
  const stream = client.prompt("hi");
  const events = await guard(stream.collect(), "prompt");
  assert.deepEqual(stream.startResult, { started: true, lane: "fast" });
  assert.deepEqual(events, [
    { type: "future_event", seq: 2, prompt_id: stream.id, payload: { nested: [1, { deep: true }] } },
    { type: "text_delta", seq: 3, prompt_id: stream.id, delta: "é中😀\u2028x", confidence: 0.9 },
    { type: "done", seq: 4, prompt_id: stream.id },
  ]);
  assert.deepEqual(
    all.map((e) => e.type),
    ["ext_notify", "future_event", "text_delta", "done"],
  );
  assert.deepEqual(bad, []);
});
