// examples/prompt.mjs run as a program: its output and exit codes.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { clientDir, guard, tempDir, writeScript, zotBin } from "./helpers.mjs";

/**
 * Runs the example and collects its output.
 * @param {string[]} args
 * @returns {Promise<{code: number | null, stdout: string, stderr: string}>}
 */
function runExample(args) {
  const proc = spawn(process.execPath, [join(clientDir, "examples/prompt.mjs"), ...args], {
    env: { ...process.env, ZOTCORE_RPC_TOKEN: undefined },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  return guard(
    new Promise((resolve) => proc.on("close", (code) => resolve({ code, stdout, stderr }))),
    "example run",
  );
}

test("the example prints the answer and exits 0 when the prompt is done", async (t) => {
  const cwd = tempDir(t);
  const r = await runExample(["--zot", zotBin, "--", "--provider", "scripted", "--cwd", cwd, "list files"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.length > 0, "the answer's text is on stdout");
  assert.doesNotMatch(r.stdout, /\[tool\]|\[usage\]/);
  // The two messages' texts are paragraphs apart, as zot -p prints them.
  assert.match(r.stdout, /at work\.\n\nThe bash tool ran/);
  assert.match(r.stdout, /back to me\.\n$/);
  assert.match(r.stderr, /\[tool\] bash \{"command":"echo hello from zot && ls"\}/);
  assert.match(r.stderr, /\[usage\] in \d+ out \d+/);
});

test("the usage of a model without known prices reads unknown, never $0", async (t) => {
  const cwd = tempDir(t);
  const r = await runExample(["--zot", zotBin, "--", "--provider", "scripted", "--model", "not-in-the-catalog", "--cwd", cwd, "list files"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /\[usage\] in \d+ out \d+ cache \d+\/\d+ cost unknown \(total unknown\)/);
  assert.doesNotMatch(r.stderr, /\$0\.000000/);
});

test("the example exits 1 when the prompt fails with an error event", async (t) => {
  const script = writeScript(t, { turns: [{ steps: [{ error: { status: 400, kind: "invalid_request_error", message: "bad request" } }] }] });
  const r = await runExample(["--zot", zotBin, "--", "--provider", "scripted", "--script", script, "--cwd", tempDir(t), "hi"]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /error: .*bad request.*\(provider_error\)/);
});

test("the example exits 2 without a message and 1 when zot cannot run", async () => {
  assert.equal((await runExample([])).code, 2);
  const r = await runExample(["--zot", "/nonexistent/zot", "hi"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /spawn_failed/);
});

test("examples/tool.mjs: the model calls the function", async (t) => {
  const script = writeScript(t, { turns: [{ steps: [{ tool_calls: [{ name: "weather", args: { city: "Oslo" } }] }, { text: "It is foggy in Oslo." }] }] });
  const proc = spawn(process.execPath, [join(clientDir, "examples/tool.mjs"), "--provider", "scripted", "--script", script, "--cwd", tempDir(t), "weather in Oslo?"], {
    env: { ...process.env, ZOT_BIN: zotBin, ZOTCORE_RPC_TOKEN: undefined },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  const code = await guard(new Promise((resolve) => proc.on("close", resolve)), "tool example");
  assert.equal(code, 0, stderr);
  assert.match(stderr, /\[weather\] fog and 12 degrees in Oslo/);
  assert.equal(stdout, "It is foggy in Oslo.\n");
});

test("examples/structured.mjs: the answer is parsed after a corrective turn", async (t) => {
  const script = writeScript(t, { turns: [
    { steps: [{ text: "Paris, about two million.", usage: { input: 20, output: 8 } }] },
    { steps: [{ text: '{"city": "Paris", "population": 2100000}', usage: { input: 40, output: 12 } }] },
  ] });
  const proc = spawn(process.execPath, [join(clientDir, "examples/structured.mjs"), "--provider", "scripted", "--script", script, "--cwd", tempDir(t), "capital of France?"], {
    env: { ...process.env, ZOT_BIN: zotBin, ZOTCORE_RPC_TOKEN: undefined },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  const code = await guard(new Promise((resolve) => proc.on("close", resolve)), "structured example");
  assert.equal(code, 0, stderr);
  assert.equal(stdout, '{"city":"Paris","population":2100000}\n');
  assert.match(stderr, /end_turn: 2 turns, 0 tool calls, 60\+20 tokens/);
});

test("examples/steer.mjs: the steer lands in the running prompt", async (t) => {
  // The scripted provider counts each user message as a prompt: the prompt
  // and the context pick the second turn, the steer the third.
  const script = writeScript(t, { turns: [
    { steps: [{ text: "not reached" }] },
    { steps: [{ text: "working on it", chunk: 2, delay_ms: 100 }] },
    { steps: [{ echo: true }] },
  ] });
  const proc = spawn(process.execPath, [join(clientDir, "examples/steer.mjs"), "--provider", "scripted", "--script", script, "--cwd", tempDir(t), "fix the build", "use make"], {
    env: { ...process.env, ZOT_BIN: zotBin, ZOTCORE_RPC_TOKEN: undefined },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  const code = await guard(new Promise((resolve) => proc.on("close", resolve)), "steer example");
  assert.equal(code, 0, stderr);
  assert.match(stderr, /\[context\] <system-context/);
  assert.match(stderr, /\[steer\] use make/);
  assert.equal(stdout, "You said: use make\n");
});
