// Tool approval against the real binary: `zot rpc --approve` asks before
// write and bash, onPermissionRequest or answerPermission answers; and
// hello's protocol versions, lenient commands and set_model with any id.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";

import { ZotClient, ZotError } from "../index.js";
import { guard, openClient, tempDir, writeScript, zotBin } from "./helpers.mjs";

/** The first prompt calls write, then bash, then answers. */
const approvalScript = {
  turns: [
    {
      steps: [
        { tool_calls: [{ name: "write", args: { path: "a.txt", content: "x" } }] },
        { tool_calls: [{ name: "bash", args: { command: "echo hi" } }] },
        { text: "done" },
      ],
    },
  ],
};

/** @param {any[]} events */
const results = (events) => events.filter((e) => e.type === "tool_result");

test("onPermissionRequest decides what runs", async (t) => {
  const dir = tempDir(t);
  const asked = [];
  const client = new ZotClient({
    bin: zotBin,
    args: ["--provider", "scripted", "--cwd", dir, "--script", writeScript(t, approvalScript), "--approve"],
    env: { ZOTCORE_RPC_TOKEN: undefined },
    stderr: "ignore",
    onPermissionRequest: async (req) => {
      asked.push(req.tool);
      return req.tool === "bash" ? { decision: "reject", reason: "no shell today" } : "allow_once";
    },
  });
  t.after(() => client.close());
  await client.start();
  const events = await guard(client.prompt("go").collect(), "prompt");
  assert.deepEqual(asked, ["write", "bash"]);
  const requests = events.filter((e) => e.type === "permission_request");
  assert.equal(requests.length, 2);
  assert.ok(requests.every((r) => r.prompt_id !== undefined && r.seq > 0 && typeof r.request_id === "string"));
  const res = results(events);
  assert.deepEqual(res.map((r) => r.is_error), [false, true]);
  assert.match(res[1].content[0].text, /no shell today/);
  assert.ok(existsSync(join(dir, "a.txt")));
});

test("allow_always with save keeps the rule for the next session", async (t) => {
  const home = tempDir(t);
  const dir = tempDir(t);
  const script = writeScript(t, { turns: [{ steps: [{ tool_calls: [{ name: "bash", args: { command: "echo saved" } }] }, { text: "done" }] }] });
  const open = async () => {
    const client = new ZotClient({
      bin: zotBin,
      args: ["--provider", "scripted", "--cwd", dir, "--script", script, "--approve"],
      env: { ZOTCORE_RPC_TOKEN: undefined, ZOT_HOME: home },
      stderr: "ignore",
    });
    t.after(() => client.close());
    await client.start();
    return client;
  };
  const first = await open();
  const events = [];
  for await (const ev of first.prompt("go")) {
    events.push(ev);
    if (ev.type !== "permission_request") continue;
    assert.equal(ev.rule, "bash(echo saved *)");
    await first.answerPermission(ev.request_id, "allow_always", undefined, { save: "project" });
  }
  assert.deepEqual(results(events).map((r) => r.is_error), [false]);
  const again = await guard((await open()).prompt("go").collect(), "prompt");
  assert.equal(again.filter((e) => e.type === "permission_request").length, 0);
  assert.deepEqual(results(again).map((r) => r.is_error), [false]);
});

test("a throwing onPermissionRequest rejects the call", async (t) => {
  const client = new ZotClient({
    bin: zotBin,
    args: ["--provider", "scripted", "--cwd", tempDir(t), "--script", writeScript(t, approvalScript), "--approve"],
    env: { ZOTCORE_RPC_TOKEN: undefined },
    stderr: "ignore",
    onPermissionRequest: () => {
      throw new Error("no UI");
    },
  });
  t.after(() => client.close());
  await client.start();
  const res = results(await guard(client.prompt("go").collect(), "prompt"));
  assert.deepEqual(res.map((r) => r.is_error), [true, true]);
  assert.match(res[0].content[0].text, /no UI/);
});

test("answerPermission by hand; a request answered twice is unknown_request", async (t) => {
  const client = await openClient(t, { args: ["--script", writeScript(t, approvalScript), "--approve"] });
  const events = [];
  for await (const ev of client.prompt("go")) {
    events.push(ev);
    if (ev.type !== "permission_request") continue;
    assert.equal(ev.timeout_ms, 300000);
    await client.answerPermission(ev.request_id, ev.tool === "write" ? "allow_once" : "reject", "later");
    await assert.rejects(client.answerPermission(ev.request_id, "allow_once"), (err) => err instanceof ZotError && err.code === "unknown_request");
  }
  assert.deepEqual(results(events).map((r) => r.is_error), [false, true]);
});

test("hello carries both versions; null is absent; set_model takes any id", async (t) => {
  const client = await openClient(t);
  const hello = await client.hello(undefined, { protocolVersion: 99, client: { name: "node-test", version: "0" } });
  assert.equal(hello.protocol_version, 1);
  assert.ok(hello.version);
  assert.deepEqual(await client.request("ping", { verbose: true, trace: null }), { pong: true });
  const stream = client.prompt("hi", null);
  assert.deepEqual(await stream.start, { started: true });
  await guard(stream.collect(), "prompt");
  assert.deepEqual(await client.setModel("my-own-model"), { model: "my-own-model" });
  const ids = (await client.getModels()).models.map((m) => m.id);
  assert.ok(ids.includes("my-own-model"), ids.join(","));
  await assert.rejects(client.setModel(""), (err) => err instanceof ZotError && err.code === "unknown_model");
});
