// The mistakes embedders make with zot rpc, checked against the real binary.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";

import { LineSplitter } from "../lines.js";
import { guard, openClient, tempDir, textOf, types, writeScript, zotBin } from "./helpers.mjs";

test("a 10 MiB image prompt round-trips and reports its size", async (t) => {
  const size = 10 << 20;
  const png = Buffer.alloc(size);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
  const client = await openClient(t);
  const stream = client.prompt("what is in this picture?", [{ mime_type: "image/png", data: png.toString("base64") }]);
  const events = await guard(stream.collect(), "image prompt");
  assert.deepEqual(stream.startResult, { started: true });
  assert.equal(events.at(-1).type, "done");
  assert.deepEqual(events[0].content, [
    { type: "text", text: "what is in this picture?" },
    { type: "image", mime_type: "image/png", bytes: size },
  ]);
  const { messages } = await client.getMessages();
  assert.deepEqual(messages[0].content[1], { type: "image", mime_type: "image/png", bytes: size });
  assert.deepEqual(await client.ping(), { pong: true });
});

test("a prompt sent while another runs is queued and both end with done", async (t) => {
  const script = writeScript(t, {
    turns: [
      { steps: [{ text: "the first answer, slowly", chunk: 2, delay_ms: 20 }] },
      { steps: [{ echo: true }] },
    ],
  });
  const client = await openClient(t, { args: ["--script", script] });
  const first = client.prompt("first");
  const second = client.prompt("second");
  assert.deepEqual(await first.start, { started: true });
  assert.deepEqual(await second.start, { started: false, queued: true, position: 1 });
  assert.equal((await client.getState()).queued, 1);

  const [a, b] = await guard(Promise.all([first.collect(), second.collect()]), "both prompts");
  assert.equal(textOf(a), "the first answer, slowly");
  assert.equal(textOf(b), "You said: second");
  assert.equal(a.at(-1).type, "done");
  assert.equal(b.at(-1).type, "done");
  assert.ok(a.at(-1).seq < b[0].seq, "the queued prompt runs after the first one's done");
});

test("abort during a running tool ends with turn_end aborted, then done", async (t) => {
  const script = writeScript(t, {
    turns: [
      {
        steps: [
          { tool_calls: [{ name: "bash", args: { command: "sleep 30" } }] },
          { text: "never reached" },
        ],
      },
    ],
  });
  const client = await openClient(t, { args: ["--script", script] });
  const stream = client.prompt("sleep");
  const events = [];
  for await (const ev of stream) {
    events.push(ev);
    // The tool runs after the step's turn_end{stop: tool_use}.
    if (ev.type === "turn_end" && ev.stop === "tool_use") {
      assert.deepEqual(await client.abort(), { aborted: true, dropped: 0 });
    }
  }
  const n = events.length;
  assert.deepEqual(types(events.slice(n - 2)), ["turn_end", "done"], `events: ${types(events)}`);
  assert.equal(events[n - 2].stop, "aborted");
  assert.ok(!events.some((e) => e.type === "error"), "an abort is not an error");
  assert.ok(!events.some((e) => e.type === "text_delta"), "nothing runs after an abort");
  const result = events.find((e) => e.type === "tool_result");
  assert.equal(result?.is_error, true);
  assert.equal((await client.getState()).busy, false);
});

test("abort with all drops the queue, each dropped prompt ending with done", async (t) => {
  const script = writeScript(t, { turns: [{ steps: [{ text: "slow slow slow slow", chunk: 1, delay_ms: 50 }] }] });
  const client = await openClient(t, { args: ["--script", script] });
  const running = client.prompt("one");
  const queued = [client.prompt("two"), client.prompt("three")];
  await Promise.all([running.start, ...queued.map((s) => s.start)]);
  assert.deepEqual(await client.abort({ all: true }), { aborted: true, dropped: 2 });
  for (const s of [running, ...queued]) {
    const events = await guard(s.collect(), "aborted prompt");
    assert.deepEqual(types(events.slice(-2)), ["turn_end", "done"]);
    assert.equal(events.at(-2).stop, "aborted");
  }
});

test("stdout carries nothing but JSON objects, one per line", async (t) => {
  const proc = spawn(zotBin, ["rpc", "--provider", "scripted", "--cwd", tempDir(t)], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ZOTCORE_RPC_TOKEN: undefined },
  });
  const lines = [];
  const splitter = new LineSplitter((line) => lines.push(line));
  proc.stdout.on("data", (chunk) => splitter.push(chunk));
  proc.stderr.resume();
  const exited = new Promise((resolve) => proc.on("close", (code) => resolve(code)));
  const commands = [
    { id: 1, type: "prompt", message: "run the tool" },
    { id: "2", type: "get_state" },
    { id: 3, type: "get_messages" },
    { id: 4, type: "no_such_command" },
    { id: 5, type: "prompt", message: "a\u2028b" },
    { id: 6, type: "compact" },
  ];
  for (const c of commands) proc.stdin.write(JSON.stringify(c) + "\n");
  proc.stdin.write("{not json\n");
  proc.stdin.end();
  assert.equal(await guard(exited, "zot exits at the end of input"), 0);
  splitter.end();

  const frames = lines.map((line) => {
    const frame = JSON.parse(line); // throws on a non-JSON line
    assert.equal(typeof frame, "object");
    assert.equal(typeof frame.type, "string", line);
    return frame;
  });
  const responses = frames.filter((f) => f.type === "response");
  assert.deepEqual(
    responses.map((r) => r.id),
    [1, "2", 3, 4, 5, 6, undefined],
  );
  assert.equal(frames.filter((f) => f.type === "done").length, 3);
});
