// The client's hold on Node's event loop, and aborting work through an
// AbortSignal.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { ZotError } from "../index.js";
import { clientDir, guard, openClient, tempDir, textOf, types, writeScript, zotBin } from "./helpers.mjs";

/**
 * Runs a Node program and collects its output.
 * @param {string} file
 * @param {string[]} args
 * @returns {Promise<{code: number | null, stdout: string, stderr: string}>}
 */
function runNode(file, args) {
  const proc = spawn(process.execPath, [file, ...args], {
    env: { ...process.env, ZOTCORE_RPC_TOKEN: undefined },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  return guard(
    new Promise((resolve) => proc.on("close", (code) => resolve({ code, stdout, stderr }))),
    `node ${file} (a script that forgot close() must still exit)`,
  );
}

/**
 * Whether process pid is gone, waiting up to five seconds for it.
 * @param {number} pid
 */
async function goneWithin5s(pid) {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

test("a script that prompts and never calls close() exits, and zot with it", async (t) => {
  const dir = tempDir(t);
  const script = join(dir, "forgets-close.mjs");
  writeFileSync(
    script,
    `import { ZotClient } from ${JSON.stringify(pathToFileURL(join(clientDir, "index.js")).href)};
const [bin, cwd, mode] = process.argv.slice(2);
const client = new ZotClient({ bin, args: ["--provider", "scripted", "--cwd", cwd] });
await client.start();
console.log(JSON.stringify({ pid: client._proc.pid }));
if (mode === "prompt") {
  await client.prompt("list the files").collect();
  let text = "";
  for await (const ev of client.prompt("hello")) if (ev.type === "text_delta") text += ev.delta;
  console.log(JSON.stringify({ text }));
}
// No close(): Node must still exit once nothing is left to do.
`,
  );
  for (const mode of ["prompt", "idle"]) {
    const r = await runNode(script, [zotBin, dir, mode]);
    assert.equal(r.code, 0, `${mode}: ${r.stderr}`);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    if (mode === "prompt") assert.equal(lines[1]?.text, "You said: hello");
    assert.ok(await goneWithin5s(lines[0].pid), `${mode}: zot (pid ${lines[0].pid}) outlived the script`);
  }
});

test("aborting a prompt's signal aborts it: turn_end aborted, then done", async (t) => {
  const script = writeScript(t, {
    turns: [{ steps: [{ tool_calls: [{ name: "bash", args: { command: "sleep 30" } }] }, { text: "never reached" }] }],
  });
  const client = await openClient(t, { args: ["--script", script] });
  const controller = new AbortController();
  const events = [];
  const started = Date.now();
  for await (const ev of client.prompt("sleep", undefined, { signal: controller.signal })) {
    events.push(ev);
    if (ev.type === "turn_end" && ev.stop === "tool_use") controller.abort(); // the tool runs now
  }
  assert.deepEqual(types(events.slice(-2)), ["turn_end", "done"], `events: ${types(events)}`);
  assert.equal(events.at(-2).stop, "aborted");
  assert.ok(Date.now() - started < 20_000, "the sleep was cut short");
  assert.equal((await client.getState()).busy, false);
});

test("a queued prompt's signal drops that prompt at once, not the one running nor the one behind", async (t) => {
  const script = writeScript(t, {
    turns: [
      { steps: [{ text: "one two three four five six", chunk: 2, delay_ms: 40 }] },
      { steps: [{ text: "next answer", chunk: 1, delay_ms: 40 }] },
    ],
  });
  const client = await openClient(t, { args: ["--script", script] });
  const controller = new AbortController();
  const running = client.prompt("first");
  const queued = client.prompt("second", undefined, { signal: controller.signal });
  const behind = client.prompt("third");
  assert.equal((await queued.start).queued, true);
  controller.abort();
  const first = await guard(running.collect(), "running prompt");
  assert.equal(first.at(-2).stop, "end_turn", `the running prompt was cut: ${types(first)}`);
  assert.equal(textOf(first), "one two three four five six");
  const second = await guard(queued.collect(), "queued prompt");
  assert.deepEqual(types(second), ["turn_end", "done"], "the dropped prompt never ran");
  assert.equal(second[0].stop, "aborted");
  const third = await guard(behind.collect(), "prompt behind it");
  assert.equal(textOf(third), "next answer");
  const said = (await client.getMessages()).messages.flatMap((m) => m.content.map((b) => b.text));
  assert.ok(!said.includes("second"), `the dropped prompt reached the transcript: ${said}`);
});

test("abort with promptId cancels that work alone, and leaves ended work alone", async (t) => {
  const script = writeScript(t, {
    turns: [{ steps: [{ tool_calls: [{ name: "bash", args: { command: "sleep 30" } }] }, { text: "never reached" }] }, { steps: [{ echo: true }] }],
  });
  const client = await openClient(t, { args: ["--script", script] });
  const running = client.prompt("sleep");
  const waiting = client.prompt("wait");
  assert.equal((await waiting.start).position, 1);
  assert.deepEqual(await client.abort({ promptId: waiting.id }), { aborted: false, dropped: 1 });
  assert.deepEqual(await client.abort({ promptId: running.id }), { aborted: true, dropped: 0 });
  const events = await guard(running.collect(), "aborted prompt");
  assert.equal(events.at(-2).stop, "aborted");
  assert.deepEqual(types(await guard(waiting.collect(), "dropped prompt")), ["turn_end", "done"]);
  assert.deepEqual(await client.abort({ promptId: running.id }), { aborted: false, dropped: 0 });
  await assert.rejects(client.abort({ all: true, promptId: running.id }), (err) => err instanceof ZotError && err.code === "invalid_params");
});

test("a signal aborted before the prompt sends nothing", async (t) => {
  const client = await openClient(t);
  const stream = client.prompt("never sent", undefined, { signal: AbortSignal.abort() });
  await assert.rejects(stream.start, (err) => err instanceof ZotError && err.code === "aborted");
  await assert.rejects(stream.collect(), (err) => err instanceof ZotError && err.code === "aborted");
  assert.equal((await client.getState()).message_count, 0);
  // A signal aborted after the work ended changes nothing.
  const controller = new AbortController();
  const events = await client.prompt("list the files", undefined, { signal: controller.signal }).collect();
  controller.abort();
  assert.equal(events.at(-1).type, "done");
  assert.equal((await client.getState()).message_count, 4);
});
