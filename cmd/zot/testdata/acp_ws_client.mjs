// Drives zot daemon's WebSocket listener with the official ACP TypeScript
// SDK's WebSocket transport (@agentclientprotocol/sdk/experimental/ws-client,
// over the npm ws package), a client nobody on the zot project wrote:
// initialize, session/new, a prompt whose write asks for permission, a
// cancelled prompt, a connection dropped mid-turn and the session resumed
// on a new one (the rest of the turn arrives there), session/load once it
// ended. Run by TestRemoteSDKClient with URL, TOKEN, WORK and ANSWER set;
// exits 1 on the first failed check.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { client } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const require = createRequire(import.meta.url);
const { WebSocket } = require("ws");
const { URL: url, TOKEN: token, WORK: work, ANSWER: slow } = process.env;

// connect opens an SDK client over WebSocket; updates collects every
// session/update, permission answers session/request_permission.
function connect(updates, permission) {
  const stream = createWebSocketStream(url, { WebSocket, headers: { Authorization: `Bearer ${token}` } });
  const app = client()
    .onNotification("session/update", ({ params }) => { updates.push(params); })
    .onRequest("session/request_permission", ({ params }) => permission(params));
  const conn = app.connect(stream);
  return { conn, agent: conn.agent };
}

function text(updates, kind) {
  return updates
    .filter((u) => u.update.sessionUpdate === kind && u.update.content?.type === "text")
    .map((u) => u.update.content.text)
    .join("");
}

async function until(what, cond) {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const updates = [];
const asked = [];
const c = connect(updates, (params) => {
  asked.push(params);
  return { outcome: { outcome: "selected", optionId: "allow_once" } };
});
const init = await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
assert.equal(init.protocolVersion, 1);
assert.equal(init.agentCapabilities.loadSession, true);
const { sessionId } = await c.agent.request("session/new", { cwd: work, mcpServers: [] });

// A prompt whose write asks for permission first.
const first = await c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write a.txt" }] });
assert.equal(first.stopReason, "end_turn");
assert.equal(asked.length, 1);
assert.equal(asked[0].toolCall.toolCallId, "w1");
assert.equal(fs.readFileSync(path.join(work, "a.txt"), "utf8"), "hello\n");
assert.equal(text(updates, "agent_message_chunk"), "Writing.Done.");

// A prompt cancelled mid-answer.
let before = updates.length;
const second = c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "talk" }] });
await until("the second answer's first chunk", () => updates.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk"));
await c.agent.notify("session/cancel", { sessionId });
assert.equal((await second).stopReason, "cancelled");

// A third prompt; its connection drops after the first chunks.
before = updates.length;
c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "talk again" }] }).catch(() => {});
await until("the third answer's first chunk", () => updates.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk"));
c.conn.close();
const seenBefore = text(updates.slice(before), "agent_message_chunk");

// A new connection resumes the session: the rest of the turn comes there.
const later = [];
const c2 = connect(later, () => ({ outcome: { outcome: "cancelled" } }));
await c2.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
await c2.agent.request("session/resume", { sessionId, cwd: work, mcpServers: [] });
await until("the end of the third answer on the new connection", () => text(later, "agent_message_chunk").endsWith(slow.slice(-8)));
const rest = text(later, "agent_message_chunk");
assert.ok(slow.endsWith(rest), `what came after the reconnect is the end of the answer: ${JSON.stringify(rest)}`);
assert.ok(slow.startsWith(seenBefore), `what came before is its start: ${JSON.stringify(seenBefore)}`);

// Once the turn ended, session/load replays the whole history.
const replayed = [];
const c3 = connect(replayed, () => ({ outcome: { outcome: "cancelled" } }));
await c3.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
for (let i = 0; ; i++) {
  try {
    await c3.agent.request("session/load", { sessionId, cwd: work, mcpServers: [] });
    break;
  } catch (e) {
    // busy until the third turn has ended
    if (i > 200) throw e;
    await new Promise((r) => setTimeout(r, 50));
  }
}
assert.equal(text(replayed, "user_message_chunk"), "write a.txttalktalk again");
assert.ok(text(replayed, "agent_message_chunk").endsWith(slow), "the third answer is whole in the history");
const list = await c3.agent.request("session/list", {});
assert.ok(list.sessions.some((s) => s.sessionId === sessionId));
c2.conn.close();
c3.conn.close();
console.log(JSON.stringify({ ok: true, sessionId, before: seenBefore.length, after: rest.length }));
process.exit(0);
