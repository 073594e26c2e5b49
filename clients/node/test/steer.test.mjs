// steer, followUp, injectContext and externalEvent against the real
// `zot rpc`: a steer sent while the model answers lands in the running
// prompt's stream and the model answers it; context reaches the next model
// call; an external event runs as a prompt of its own.

import assert from "node:assert/strict";
import { test } from "node:test";

import { guard, openClient, writeScript } from "./helpers.mjs";

/** @param {any[]} evs */
const lastText = (evs) =>
  evs
    .filter((e) => e.type === "assistant_message")
    .at(-1)
    .content.filter((/** @type {any} */ b) => b.type === "text")
    .map((/** @type {any} */ b) => b.text)
    .join("");

test("steer lands in the running prompt", async (t) => {
  const script = writeScript(t, {
    turns: [{ steps: [{ text: "first answer", chunk: 2, delay_ms: 100 }] }, { steps: [{ echo: true }] }],
  });
  const client = await openClient(t, { args: ["--script", script] });
  const stream = client.prompt("go");
  /** @type {any[]} */
  const seen = [];
  for await (const ev of stream) {
    seen.push(ev);
    if (ev.type === "assistant_start" && seen.filter((e) => e.type === "assistant_start").length === 1) {
      assert.equal(await client.steer("shorter please"), null);
    }
  }
  const steers = seen.filter((e) => e.type === "user_message" && e.kind === "steer");
  assert.deepEqual(steers.map((e) => e.content[0].text), ["shorter please"]);
  assert.equal(lastText(seen), "You said: shorter please");
});

test("idle steer, injectContext, externalEvent, followUp", async (t) => {
  const client = await openClient(t, { args: ["--script", writeScript(t, { turns: [{ steps: [{ echo: true }] }] })] });
  const s = await client.steer("hello");
  assert.ok(s);
  assert.equal(lastText(await guard(s.collect(), "idle steer")), "You said: hello");
  assert.equal(await client.injectContext("disk almost full", "watcher"), 1);
  const evs = await guard(client.externalEvent({ alert: "build failed" }, "ci").collect(), "event");
  assert.deepEqual(
    evs.filter((e) => e.type === "user_message").map((e) => [e.kind, e.source]),
    [["event", "ci"], ["context", "watcher"]],
  );
  await assert.rejects(client.injectContext("x".repeat(64 * 1024 + 1)), { code: "limit_exceeded" });
  assert.equal(lastText(await guard(client.followUp("next").collect(), "follow_up")), "You said: next");
});
