// zot-client/acp against the real zot: a daemon's WebSocket listener with
// a token file (through a proxy that cuts the connection), and a started
// zot acp. Each does initialize, new, a prompt with a permission request,
// cancel, and load; over WebSocket a connection cut mid-answer is made
// again and the answer goes on; a wrong token is refused with a clear
// error; the example runs.

import assert from "node:assert/strict";
import { spawn as spawnProcess } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, connect as netConnect } from "node:net";
import { join } from "node:path";
import { test } from "node:test";

import { PROTOCOL_VERSION, RefusedError, connect, spawn } from "../acp/index.js";
import { HANG_GUARD_MS, clientDir, guard, tempDir, zotBin } from "./helpers.mjs";

const TOKEN = "alice-0123456789abcdef0123";
const SLOW = Array.from({ length: 40 }, (_, i) => `w${String(i).padStart(2, "0")}`).join(" ") + " THE END";
const SCRIPT = {
  turns: [
    {
      steps: [
        { text: "Writing.", tool_calls: [{ id: "w1", name: "write", args: { path: "a.txt", content: "hello\n" } }] },
        { text: "Done." },
      ],
    },
    { steps: [{ text: "a long and slow answer that the client cancels", chunk: 2, delay_ms: 200 }] },
    { steps: [{ text: SLOW, chunk: 4, delay_ms: 50 }] },
    {
      steps: [
        { text: "Writing again.", tool_calls: [{ id: "w2", name: "write", args: { path: "b.txt", content: "again\n" } }] },
        { text: "Written." },
      ],
    },
  ],
};

/** @param {import("node:test").TestContext} t */
function setup(t) {
  const dir = tempDir(t);
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPT));
  const env = { ...process.env, ZOT_HOME: join(dir, "home"), ZOT_SOCKET: join(dir, "s") };
  delete env.ZOT_TOKEN;
  const work = join(dir, "work");
  mkdirSync(work);
  return { dir, script, env, work };
}

/**
 * Starts zot daemon --listen with a token file; resolves to its URL.
 * @param {import("node:test").TestContext} t
 * @param {ReturnType<typeof setup>} s
 */
async function daemon(t, s) {
  const tokens = join(s.dir, "tokens");
  writeFileSync(tokens, `alice ${TOKEN}\n`);
  chmodSync(tokens, 0o600);
  const proc = spawnProcess(
    zotBin,
    ["daemon", "--provider", "scripted", "--script", s.script, "--permission", "ask", "--listen", "ws://127.0.0.1:0", "--token-file", tokens],
    { env: s.env, stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise((r) => proc.once("close", r));
  t.after(async () => {
    proc.kill("SIGKILL");
    await exited;
  });
  let log = "";
  return guard(
    new Promise((resolve, reject) => {
      proc.stderr.on("data", (c) => {
        log += c;
        const m = /listening on (ws:\/\/\S+\/acp)/.exec(log);
        if (m) resolve(m[1]);
      });
      proc.once("close", () => reject(new Error(`the daemon exited:\n${log}`)));
    }),
    "the daemon's listener",
  );
}

/**
 * A loopback proxy to port whose cut() closes every connection so far.
 * @param {import("node:test").TestContext} t
 * @param {number} port
 */
async function proxy(t, port) {
  /** @type {import("node:net").Socket[]} */
  let conns = [];
  const server = createServer((c) => {
    const up = netConnect({ host: "127.0.0.1", port });
    conns.push(c, up);
    c.pipe(up);
    up.pipe(c);
    c.on("error", () => up.destroy());
    up.on("error", () => c.destroy());
    c.on("close", () => up.destroy());
    up.on("close", () => c.destroy());
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)));
  const cut = () => {
    for (const c of conns) c.destroy();
    conns = [];
  };
  t.after(() => {
    cut();
    server.close();
  });
  const addr = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { url: `ws://127.0.0.1:${addr.port}`, cut };
}

/** What a client's callbacks saw. */
function seen() {
  const s = {
    text: "",
    /** @type {string[]} */
    perms: [],
    /** cut() at the first question about cutAt. */
    cutAt: "",
    /** @type {(() => void) | null} */
    cut: null,
    /** @param {any} n */
    onUpdate(n) {
      const u = n.update;
      if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") s.text += u.content.text;
      if (u.sessionUpdate === "user_message_chunk" && u.content.type === "text") s.text += "[user]" + u.content.text;
    },
    /** @param {any} req */
    onPermission(req) {
      s.perms.push(req.toolCall.toolCallId);
      if (req.toolCall.toolCallId === s.cutAt && s.cut) {
        s.cut();
        s.cut = null;
      }
      return "allow_once";
    },
    /** @param {string} want */
    async wait(want) {
      const deadline = Date.now() + HANG_GUARD_MS;
      while (!s.text.includes(want)) {
        if (Date.now() > deadline) throw new Error(`no ${want} in ${s.text}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
  return s;
}

/**
 * The script's first two turns: a write that asks, a cancelled answer.
 * @param {import("../acp/index.js").AcpClient} c
 * @param {ReturnType<typeof seen>} s
 * @param {string} work
 */
async function turns(c, s, work) {
  const sid = await c.newSession(work);
  const res = await guard(c.prompt(sid, "write a.txt"), "the prompt");
  assert.equal(res.stopReason, "end_turn");
  assert.deepEqual(s.perms, ["w1"]);
  assert.equal(readFileSync(join(work, "a.txt"), "utf8"), "hello\n");
  const slow = c.prompt(sid, "a slow one");
  await s.wait("a long");
  await c.cancel(sid);
  assert.equal((await guard(slow, "the cancelled prompt")).stopReason, "cancelled");
  return sid;
}

test("over WebSocket: a token, a permission, cancel, a cut connection, load", async (t) => {
  const s = setup(t);
  const url = await daemon(t, s);
  const p = await proxy(t, Number(new URL(url).port));

  await assert.rejects(connect(p.url, { token: "wrong-0123456789abcdef0123" }), (err) => {
    assert.ok(err instanceof RefusedError);
    assert.equal(err.status, 401);
    assert.match(err.message, /refused the token/);
    return true;
  });

  const got = seen();
  const c = await connect(p.url, { token: TOKEN, onUpdate: got.onUpdate, onPermission: got.onPermission });
  assert.equal(c.info.protocolVersion, PROTOCOL_VERSION);
  const sid = await turns(c, got, s.work);
  const long = c.prompt(sid, "a long one");
  await got.wait("w04");
  p.cut();
  const res = await guard(long, "the prompt across the cut");
  assert.equal(res.reconnected, true);
  assert.ok(got.text.includes("THE END"), got.text);

  const again = seen();
  const c2 = await connect(p.url, { token: TOKEN, onUpdate: again.onUpdate });
  await c2.loadSession(sid, s.work);
  await c2.close();
  assert.ok(again.text.includes(SLOW), again.text);
  assert.ok(again.text.includes("[user]write a.txt"), again.text);

  // Cut while a permission question waits: it is asked again on the
  // resumed connection, whose answer lets the write run.
  got.cutAt = "w2";
  got.cut = p.cut;
  assert.equal((await guard(c.prompt(sid, "write b.txt"), "the prompt across the cut")).reconnected, true);
  assert.equal(readFileSync(join(s.work, "b.txt"), "utf8"), "again\n");
  assert.equal(got.perms.filter((id) => id === "w2").length, 2, String(got.perms));
  await c.close();
});

test("spawning zot acp: a permission, cancel, load in a second one", async (t) => {
  const s = setup(t);
  const args = ["--provider", "scripted", "--script", s.script, "--permission", "ask"];
  const got = seen();
  const c = await spawn({ bin: zotBin, args, env: s.env, onUpdate: got.onUpdate, onPermission: got.onPermission });
  const sid = await turns(c, got, s.work);
  await c.close();
  const again = seen();
  const c2 = await spawn({ bin: zotBin, args, env: s.env, onUpdate: again.onUpdate });
  await c2.loadSession(sid, s.work);
  await c2.close();
  assert.ok(again.text.includes("[user]write a.txt"), again.text);
  assert.ok(again.text.includes("Done."), again.text);
});

test("examples/acp.mjs runs against a daemon", async (t) => {
  const s = setup(t);
  const url = await daemon(t, s);
  const proc = spawnProcess(process.execPath, [join(clientDir, "examples/acp.mjs"), "write a.txt"], {
    env: { ...s.env, ZOT_URL: url, ZOT_TOKEN: TOKEN },
    cwd: s.work,
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (c) => (out += c));
  proc.stderr.on("data", (c) => (err += c));
  const code = await guard(new Promise((r) => proc.once("close", r)), "the example");
  assert.equal(code, 0, err);
  assert.match(out, /Writing\./);
  assert.match(out, /stop: end_turn/);
});

test("the WebSocket framing: fragments, a ping, a long message, a masked text, the close", async () => {
  const { createHash } = await import("node:crypto");
  const { WebSocket } = await import("../acp/websocket.js");
  /** @type {(v: {auth: string, text: string}) => void} */
  let done = () => {};
  const result = new Promise((r) => (done = r));
  const server = createServer((c) => {
    let buf = Buffer.alloc(0);
    let upgraded = false;
    let auth = "";
    c.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        buf = buf.subarray(end + 4);
        upgraded = true;
        auth = /Authorization: (.+)\r?\n?/.exec(head)?.[1]?.trim() ?? "";
        const key = /Sec-WebSocket-Key: (\S+)/.exec(head)?.[1] ?? "";
        const accept = createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
        c.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
        const big = Buffer.alloc(70000, "x");
        const len = Buffer.alloc(8);
        len.writeBigUInt64BE(BigInt(big.length));
        c.write(Buffer.concat([Buffer.from([0x01, 3]), Buffer.from("hel"), Buffer.from([0x89, 1]), Buffer.from("p"), Buffer.from([0x80, 2]), Buffer.from("lo")]));
        c.write(Buffer.concat([Buffer.from([0x81, 127]), len, big]));
      }
      // Frames from the client: a pong, then the text (masked).
      while (buf.length >= 6) {
        const n = buf[1] & 0x7f;
        if (buf.length < 6 + n) return;
        const op = buf[0] & 0x0f;
        const mask = buf.subarray(2, 6);
        const data = Buffer.from(buf.subarray(6, 6 + n).map((b, i) => b ^ mask[i % 4]));
        buf = buf.subarray(6 + n);
        if (op === 0x1) {
          c.end(Buffer.from([0x88, 2, 0x03, 0xe8]));
          done({ auth, text: data.toString("utf8") });
        }
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)));
  const port = /** @type {import("node:net").AddressInfo} */ (server.address()).port;
  const ws = await WebSocket.open(`ws://127.0.0.1:${port}/acp`, { headers: { Authorization: "Bearer tok" } });
  /** @type {string[]} */
  const got = [];
  /** @type {(code: number) => void} */
  let onClose = () => {};
  const closed = new Promise((r) => (onClose = r));
  ws.start((text) => {
    got.push(text);
    if (got.length === 2) ws.send("héllo");
  }, onClose);
  const { auth, text } = await guard(result, "the server's view");
  assert.equal(await guard(closed, "the close"), 1000);
  server.close();
  assert.equal(got[0], "hello");
  assert.equal(got[1].length, 70000);
  assert.equal(auth, "Bearer tok");
  assert.equal(text, "héllo");
});
