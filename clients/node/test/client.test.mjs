// ZotClient against the real zot binary on the offline scripted provider.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ZotClient, ZotError } from "../index.js";
import { guard, openClient, textOf, types, writeScript, zotBin } from "./helpers.mjs";

/**
 * Asserts the events belong to one work item and end with its one done.
 * @param {any[]} events
 * @param {number} id
 */
function assertOneWork(events, id) {
  assert.ok(events.length > 0, "no events");
  assert.equal(events.at(-1).type, "done", `last event: ${types(events)}`);
  assert.equal(events.filter((e) => e.type === "done").length, 1, `one done: ${types(events)}`);
  let seq = 0;
  for (const ev of events) {
    assert.equal(ev.prompt_id, id, `prompt_id of ${JSON.stringify(ev)}`);
    assert.ok(ev.seq > seq, `seq increases: ${seq} then ${ev.seq}`);
    seq = ev.seq;
  }
}

test("a prompt with a tool call streams every event and ends with done", async (t) => {
  const client = await openClient(t);
  const stream = client.prompt("list the files");
  const events = await guard(stream.collect(), "first prompt");
  assert.deepEqual(await stream.start, { started: true });
  assert.deepEqual(stream.startResult, { started: true });
  assertOneWork(events, stream.id);

  assert.equal(events[0].type, "user_message");
  assert.deepEqual(events[0].content, [{ type: "text", text: "list the files" }]);
  const call = events.find((e) => e.type === "tool_call");
  assert.equal(call.name, "bash");
  assert.deepEqual(call.args, { command: "echo hello from zot && ls" });
  const result = events.find((e) => e.type === "tool_result");
  assert.equal(result.id, call.id);
  assert.equal(result.is_error, false);
  assert.match(JSON.stringify(result.content), /hello from zot/);
  assert.deepEqual(
    events.filter((e) => e.type === "turn_end").map((e) => e.stop),
    ["tool_use", "end_turn"],
  );
  const usage = events.filter((e) => e.type === "usage");
  assert.equal(usage.length, 2);
  assert.ok(usage[1].cumulative.cost_usd > 0, "the scripted model has made-up prices");
  assert.ok(textOf(events).length > 0);

  const second = await guard(client.prompt("again").collect(), "second prompt");
  assert.equal(textOf(second), "You said: again");
});

test("every command answers with its result", async (t) => {
  const client = await openClient(t);
  const hello = await client.hello();
  assert.equal(hello.protocol_version, 1);
  assert.equal(hello.provider, "scripted");
  assert.equal(hello.model, "scripted");
  assert.equal(typeof hello.version, "string");

  assert.deepEqual(await client.ping(), { pong: true });

  const models = await client.getModels();
  assert.ok(models.models.some((m) => m.id === "scripted" && m.provider === "scripted"));
  assert.deepEqual(await client.setModel("scripted"), { model: "scripted" });
  assert.equal((await client.setMode("read_only")).mode, "read_only");
  assert.equal((await client.getState()).mode, "read_only");
  assert.deepEqual((await client.setMode("auto")).modes, ["ask", "accept_edits", "auto", "read_only"]);

  let state = await client.getState();
  assert.equal(state.provider, "scripted");
  assert.equal(state.busy, false);
  assert.equal(state.message_count, 0);

  await guard(client.prompt("one").collect(), "prompt one");
  await guard(client.prompt("two").collect(), "prompt two");
  const { messages } = await client.getMessages();
  assert.equal(messages[0].role, "user");
  assert.deepEqual(messages[0].content, [{ type: "text", text: "one" }]);
  assert.deepEqual(
    messages.map((m) => m.role),
    ["user", "assistant", "tool", "assistant", "user", "assistant"],
  );
  state = await client.getState();
  assert.equal(state.message_count, messages.length);
  assert.ok(state.usage.input > 0);
  // Undo of the second turn (it changed no file), then it again.
  assert.deepEqual(await client.undo(2), { turn: 2, message_count: 4, files: [] });
  assert.equal((await client.getState()).message_count, 4);
  await guard(client.prompt("two").collect(), "prompt two again");

  // A third exchange gives compaction something to summarise beyond the
  // kept tail (which grows to keep a tool call with its result).
  await guard(client.prompt("three").collect(), "prompt three");
  const before = (await client.getMessages()).messages.length;
  const compact = client.compact("keep the file names");
  const compacted = await guard(compact.collect(), "compact");
  assert.deepEqual(await compact.start, { started: true });
  assertOneWork(compacted, compact.id);
  const summary = compacted.find((e) => e.type === "compact_done");
  assert.ok(summary, `compact_done in ${types(compacted)}`);
  assert.ok(summary.summary.length > 0);
  assert.equal(summary.messages_before, before);
  assert.ok((await client.getState()).message_count < before);

  assert.deepEqual(await client.abort(), { aborted: false, dropped: 0 });
  await client.clear();
  state = await client.getState();
  assert.equal(state.message_count, 0);
  assert.equal(state.usage.input, 0);
});

test("setSandbox changes the sandbox and leaves what it is not given", async (t) => {
  const client = await openClient(t);
  assert.ok((await client.getCapabilities()).features.includes("sandbox"));
  let sb = await client.setSandbox({ mode: "read-only", network: false });
  assert.equal(sb.mode, "read-only");
  assert.equal(sb.network, false);
  assert.equal((await client.getState()).sandbox.mode, "read-only");
  sb = await client.setSandbox({ network: true });
  assert.deepEqual([sb.mode, sb.network], ["read-only", true]);
  sb = await client.setSandbox({ mode: "full" });
  assert.deepEqual([sb.mode, sb.network, sb.enforced_by], ["full", true, "none"]);
  await assert.rejects(client.setSandbox({ mode: "sometimes" }), (err) => err instanceof ZotError && err.code === "invalid_params");
});

test("failures reject with a ZotError carrying the stable code", async (t) => {
  const client = await openClient(t);
  const fails = async (promise, code, command) => {
    await assert.rejects(promise, (err) => {
      assert.ok(err instanceof ZotError, `${err}`);
      assert.equal(err.code, code);
      assert.equal(err.command, command);
      assert.equal(err.response?.success, false);
      return true;
    });
  };
  await fails(client.setModel(""), "unknown_model", "set_model");
  await fails(client.undo(), "not_found", "undo");
  await fails(client.request("frobnicate"), "unknown_command", "frobnicate");
  await fails(client.request("set_model", { model: 7 }), "invalid_params", "set_model");

  const bad = client.prompt("look", [{ mime_type: "image/png", data: "not base64!" }]);
  await fails(bad.start, "invalid_image", "prompt");
  await assert.rejects(bad.collect(), (err) => err instanceof ZotError && err.code === "invalid_image");
  await fails(client.prompt("").start, "invalid_params", "prompt");

  // An empty transcript has nothing to compact: the work fails with an
  // error event, then done.
  const empty = await guard(client.compact().collect(), "empty compact");
  assert.deepEqual(types(empty).slice(-2), ["error", "done"]);

  // clear and set_model are refused while work runs.
  const script = writeScript(t, { turns: [{ steps: [{ text: "slow slow slow slow", chunk: 1, delay_ms: 50 }] }] });
  const slow = await openClient(t, { args: ["--script", script] });
  const running = slow.prompt("go");
  await running.start;
  await fails(slow.clear(), "busy", "clear");
  await fails(slow.setModel("scripted"), "busy", "set_model");
  await slow.abort();
  await guard(running.collect(), "aborted prompt");
});

test("with ZOTCORE_RPC_TOKEN, hello must come first with the right token", async (t) => {
  const env = { ZOTCORE_RPC_TOKEN: "test-token" };

  const good = await openClient(t, { env });
  assert.equal((await good.hello("test-token")).provider, "scripted");
  assert.deepEqual(await good.ping(), { pong: true });

  const wrong = await openClient(t, { env });
  const exited = new Promise((resolve) => wrong.once("exit", (code) => resolve(code)));
  await assert.rejects(wrong.hello("wrong-token"), (err) => err instanceof ZotError && err.code === "invalid_token");
  assert.equal(await guard(exited, "exit after a wrong token"), 1);
  await assert.rejects(wrong.ping(), (err) => err instanceof ZotError && err.code === "process_exited");

  const missing = await openClient(t, { env });
  await assert.rejects(missing.ping(), (err) => err instanceof ZotError && err.code === "auth_required");
});

test("text with U+2028 and U+2029 stays on one frame", async (t) => {
  const text = "line\u2028separator\u2029paragraph \u00e9\u4e2d\u{1F600} end";
  const script = writeScript(t, { turns: [{ steps: [{ text, chunk: 3 }] }] });
  const client = await openClient(t, { args: ["--script", script] });
  const events = await guard(client.prompt("say it \u2028 back").collect(), "prompt");
  assert.equal(textOf(events), text);
  const message = events.find((e) => e.type === "assistant_message");
  assert.deepEqual(message.content, [{ type: "text", text }]);
  assert.deepEqual(events[0].content, [{ type: "text", text: "say it \u2028 back" }]);
});

test("commands fail cleanly before start, after close and for a missing binary", async () => {
  const idle = new ZotClient({ bin: zotBin });
  await assert.rejects(idle.ping(), (err) => err instanceof ZotError && err.code === "not_started");
  assert.deepEqual(await idle.close(), { code: null, signal: null });

  const missing = new ZotClient({ bin: "/nonexistent/zot" });
  await assert.rejects(missing.start(), (err) => err instanceof ZotError && err.code === "spawn_failed");
  await assert.rejects(missing.ping(), (err) => err instanceof ZotError);

  const client = new ZotClient({ bin: zotBin, args: ["--provider", "scripted"], stderr: "ignore" });
  await client.start();
  assert.deepEqual(await client.close(), { code: 0, signal: null });
  await assert.rejects(client.ping(), (err) => err instanceof ZotError && err.code === "closed");
});

test("run resolves to the prompt's record; an answer that never follows the schema rejects with invalid_output", async (t) => {
  const script = writeScript(t, { turns: [
    { steps: [{ text: '{"n": 2}' }] },
    { steps: [{ text: "not json" }] },
  ] });
  const zot = await openClient(t, { args: ["--script", script] });
  const outputSchema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  const res = await guard(zot.run("two?", { outputSchema }), "run");
  assert.deepEqual(res.structured, { n: 2 });
  assert.equal(res.stop, "end_turn");
  assert.equal(res.text, '{"n": 2}');
  assert.equal(res.turns, 1);
  await assert.rejects(zot.prompt("again", null, { outputSchema, outputRetries: 0 }).result(), (err) => {
    assert.ok(err instanceof ZotError);
    assert.equal(err.code, "invalid_output");
    assert.equal(err.result.stop, "error");
    assert.equal(err.result.text, "not json");
    return true;
  });
  await assert.rejects(zot.run("bad", { outputSchema: { type: 5 } }), (err) => err.code === "invalid_params");
});
