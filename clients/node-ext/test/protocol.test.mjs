// The protocol as zot-ext speaks it, on in-memory streams with a scripted
// host: the order of the handshake, what is skipped, what a request's
// answer is, cancel and shutdown. The tests through zot are in ext.test.mjs.

import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";

import { Extension, ToolError, block, image, insert, rewrite } from "../index.js";

const ACK = { type: "hello_ack", protocol_version: 1, zot_version: "dev", provider: "p", model: "m", cwd: "/w", extension_dir: "/e", data_dir: "/d" };

/** A scripted host around ext.serve: send frames, read the answers in order. */
function host(ext) {
  const input = new PassThrough();
  const lines = [];
  const waiting = [];
  const output = {
    write(s) {
      for (const line of s.split("\n").filter(Boolean)) {
        const f = JSON.parse(line);
        const w = waiting.shift();
        if (w) w(f);
        else lines.push(f);
      }
    },
  };
  const served = ext.serve(input, output);
  return {
    served,
    send: (f) => input.write((typeof f === "string" ? f : JSON.stringify(f)) + "\n"),
    read: () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiting.push(r))),
    end: () => input.end(),
    pending: () => lines.length,
  };
}

function everything() {
  const ext = new Extension("t", "0.1", { log: () => {} });
  ext.tool("echo", { description: "Echo.", schema: { type: "object" }, timeoutMs: 2500 }, (args) => [args.text ?? "", image(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))]);
  ext.tool("bad", () => {
    throw new ToolError("bad input");
  });
  ext.tool("wait", (args, req) => new Promise((resolve) => req.signal.addEventListener("abort", () => resolve("late"))));
  ext.command("hi", "Say hi.", (args) => insert("hi " + args));
  ext.interceptToolCall((call) => (call.tool_name === "bash" ? block("no bash") : rewrite({ args: { x: 1 } })));
  ext.interceptAssistantMessage((text) => text.replace("secret", "[redacted]"));
  ext.on("turn_end", () => {});
  return ext;
}

test("hello, registrations, then after hello_ack subscribe and ready", async () => {
  const h = host(everything());
  assert.deepEqual(await h.read(), { type: "hello", name: "t", version: "0.1", capabilities: ["commands", "tools", "events"], sends_ready: true });
  const regs = [await h.read(), await h.read(), await h.read(), await h.read()];
  assert.deepEqual(regs.map((r) => [r.type, r.name]), [["register_tool", "echo"], ["register_tool", "bad"], ["register_tool", "wait"], ["register_command", "hi"]]);
  assert.deepEqual(regs[0], { type: "register_tool", name: "echo", description: "Echo.", schema: { type: "object" }, timeout_ms: 2500 });
  // Nothing that depends on hello_ack comes before it: a request before
  // it is skipped, not answered; so are lines that are not frames.
  h.send({ type: "tool_call", id: "0", name: "echo", args: {} });
  h.send("not json");
  h.send({ type: "from_the_future" });
  h.send(ACK);
  assert.deepEqual(await h.read(), { type: "subscribe", events: ["turn_end"], intercept: ["tool_call", "assistant_message"] });
  assert.deepEqual(await h.read(), { type: "ready" });
  h.send({ type: "shutdown" });
  assert.deepEqual(await h.read(), { type: "shutdown_ack" });
  await h.served;
  assert.equal(h.pending(), 0);
});

test("answers carry the request's id; a cancelled request is not answered", async () => {
  const h = host(everything());
  h.send(ACK);
  while ((await h.read()).type !== "ready");
  h.send({ type: "tool_call", id: "1", name: "echo", args: { text: "x" } });
  assert.deepEqual(await h.read(), { type: "tool_result", id: "1", content: [{ type: "text", text: "x" }, { type: "image", mime_type: "image/png", data: "iVBORw0KGgo=" }] });
  h.send({ type: "tool_call", id: "2", name: "bad", args: {} });
  assert.deepEqual(await h.read(), { type: "tool_result", id: "2", content: [{ type: "text", text: "bad input" }], is_error: true });
  h.send({ type: "tool_call", id: "3", name: "nope", args: {} });
  assert.deepEqual(await h.read(), { type: "tool_result", id: "3", content: [{ type: "text", text: 'extension t has no tool "nope"' }], is_error: true });
  h.send({ type: "command_invoked", id: "4", name: "hi", args: "Ada" });
  assert.deepEqual(await h.read(), { type: "command_response", id: "4", action: "insert", insert: "hi Ada" });
  h.send({ type: "command_invoked", id: "5", name: "nope", args: "" });
  assert.deepEqual(await h.read(), { type: "command_response", id: "5", action: "noop", error: 'extension t has no command "nope"' });
  h.send({ type: "event_intercept", id: "6", event: "tool_call", tool_id: "c", tool_name: "bash", tool_args: {} });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "6", block: true, reason: "no bash" });
  h.send({ type: "event_intercept", id: "7", event: "tool_call", tool_id: "c", tool_name: "read", tool_args: {} });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "7", modified_args: { x: 1 } });
  h.send({ type: "event_intercept", id: "8", event: "assistant_message", text: "the secret" });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "8", replace_text: "the [redacted]" });
  h.send({ type: "event_intercept", id: "9", event: "turn_start", step: 1 });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "9" });

  h.send({ type: "tool_call", id: "w", name: "wait", args: {} });
  h.send({ type: "cancel", id: "w", reason: "aborted" });
  h.send({ type: "tool_call", id: "after", name: "echo", args: { text: "y" } });
  assert.equal((await h.read()).id, "after");
  h.end();
  await h.served;
  assert.equal(h.pending(), 0, "the cancelled request was answered");
});

test("a second intercept of an event is chained after the first", async () => {
  const ext = new Extension("t");
  ext.interceptToolCall((call) => (call.tool_name === "bash" ? block("no bash") : rewrite({ args: { path: "/safe" } })));
  ext.interceptToolCall((call) => (call.tool_args?.path === "/safe" ? undefined : block("saw " + JSON.stringify(call.tool_args))));
  ext.interceptTurnStart(() => block("first"));
  ext.interceptTurnStart(() => undefined);
  ext.interceptAssistantMessage((text) => text.replace("SECRET", "[redacted]"));
  ext.interceptAssistantMessage((text) => text.replace("TOKEN", "[token]"));
  const h = host(ext);
  h.send(ACK);
  for (let f = await h.read(); f.type !== "ready"; f = await h.read());
  h.send({ type: "event_intercept", id: "1", event: "tool_call", tool_id: "c", tool_name: "bash", tool_args: {} });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "1", block: true, reason: "no bash" });
  h.send({ type: "event_intercept", id: "2", event: "tool_call", tool_id: "c", tool_name: "ls", tool_args: { path: "/" } });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "2", modified_args: { path: "/safe" } });
  h.send({ type: "event_intercept", id: "3", event: "turn_start", step: 1 });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "3", block: true, reason: "first" });
  h.send({ type: "event_intercept", id: "4", event: "assistant_message", text: "SECRET TOKEN" });
  assert.deepEqual(await h.read(), { type: "event_intercept_response", id: "4", replace_text: "[redacted] [token]" });
  h.end();
  await h.served;
});
