// Drives `zot daemon` with the official ACP TypeScript SDK
// (@agentclientprotocol/sdk, pinned in ../package.json), a client nobody
// on the zot project wrote: initialize, session/new, a prompt whose tool
// call asks for permission, a cancelled prompt, session/list, and
// session/load after the daemon restarted. The SDK checks every message
// it receives against ACP's schema. Run by `make test` (test-acp) with
// ZOT_BIN naming the binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const zot = process.env.ZOT_BIN;
if (!zot) {
  throw new Error("set ZOT_BIN to the zot binary (make test does)");
}

// Turn 1 writes a file (write needs permission); turn 2 talks slowly so
// that it can be cancelled; later turns repeat turn 2.
const script = {
  turns: [
    { steps: [
      { text: "Writing.", tool_calls: [{ id: "w1", name: "write", args: { path: "a.txt", content: "hello\n" } }] },
      { text: "Done." },
    ] },
    { steps: [{ text: "a long and slow answer that the client cancels", chunk: 2, delay_ms: 200 }] },
  ],
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zot-acp-"));
const home = path.join(tmp, "home");
const work = path.join(tmp, "work");
const socket = path.join(tmp, "d.sock");
fs.mkdirSync(work);
const scriptFile = path.join(tmp, "script.json");
fs.writeFileSync(scriptFile, JSON.stringify(script));

// startDaemon runs zot daemon and resolves once its socket accepts.
async function startDaemon() {
  const proc = spawn(zot, ["daemon", "--provider", "scripted", "--script", scriptFile, "--permission", "ask"], {
    env: { ...process.env, ZOT_HOME: home, ZOT_SOCKET: socket },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (b) => { stderr += b; });
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  for (let i = 0; i < 600; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.createConnection(socket);
      s.on("connect", () => { s.destroy(); resolve(true); });
      s.on("error", () => resolve(false));
    });
    if (ok) {
      return { proc, exited, stderr: () => stderr };
    }
    if (proc.exitCode !== null) {
      throw new Error(`zot daemon exited ${proc.exitCode}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill("SIGKILL");
  throw new Error(`zot daemon did not listen on ${socket}: ${stderr}`);
}

// connect opens an SDK client on the daemon's socket; updates collects
// every session/update, permission answers session/request_permission.
function connect(updates, permission) {
  const sock = net.createConnection(socket);
  const app = client()
    .onNotification("session/update", ({ params }) => { updates.push(params); })
    .onRequest("session/request_permission", ({ params }) => permission(params));
  const conn = app.connect(ndJsonStream(Writable.toWeb(sock), Readable.toWeb(sock)));
  return { conn, agent: conn.agent, close: () => { conn.close(); sock.destroy(); } };
}

function text(updates, kind) {
  return updates
    .filter((u) => u.update.sessionUpdate === kind && u.update.content?.type === "text")
    .map((u) => u.update.content.text)
    .join("");
}

test("the ACP TypeScript SDK drives zot daemon", async (t) => {
  let daemon = await startDaemon();
  t.after(() => {
    daemon.proc.kill("SIGKILL");
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const updates = [];
  const asked = [];
  const c = connect(updates, (params) => {
    asked.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });

  const init = await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.ok(init.agentCapabilities.sessionCapabilities.list);

  const { sessionId } = await c.agent.request("session/new", { cwd: work, mcpServers: [] });
  assert.ok(sessionId);

  // A prompt whose write asks for permission first.
  const first = await c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write a.txt" }] });
  assert.equal(first.stopReason, "end_turn");
  assert.equal(asked.length, 1);
  assert.equal(asked[0].toolCall.toolCallId, "w1");
  assert.deepEqual(asked[0].options.map((o) => o.optionId), ["allow_once", "allow_always", "allow_always_folder", "reject_once", "reject_always"]);
  assert.equal(fs.readFileSync(path.join(work, "a.txt"), "utf8"), "hello\n");
  const statuses = updates
    .filter((u) => u.update.sessionUpdate === "tool_call" || u.update.sessionUpdate === "tool_call_update")
    .map((u) => u.update.status)
    .filter(Boolean);
  assert.deepEqual(statuses, ["pending", "in_progress", "completed"]);
  assert.equal(text(updates, "agent_message_chunk"), "Writing.Done.");

  // A prompt cancelled mid-answer ends with stopReason cancelled.
  const before = updates.length;
  const second = c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "talk" }] });
  while (!updates.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk")) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await c.agent.notify("session/cancel", { sessionId });
  assert.equal((await second).stopReason, "cancelled");

  const list = await c.agent.request("session/list", {});
  assert.ok(list.sessions.some((s) => s.sessionId === sessionId && s.cwd === work));
  c.close();

  // The daemon restarts; the session loads from its file, its history
  // replayed before the answer.
  daemon.proc.kill("SIGTERM");
  const end = await daemon.exited;
  assert.equal(end.code, 0, daemon.stderr());
  daemon = await startDaemon();
  const replayed = [];
  const c2 = connect(replayed, () => ({ outcome: { outcome: "cancelled" } }));
  await c2.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await c2.agent.request("session/load", { sessionId, cwd: work, mcpServers: [] });
  assert.equal(text(replayed, "user_message_chunk"), "write a.txttalk");
  assert.ok(text(replayed, "agent_message_chunk").startsWith("Writing.Done."));
  assert.ok(replayed.some((u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === "w1"));
  c2.close();
});
