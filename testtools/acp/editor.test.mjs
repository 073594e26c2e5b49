// The official ACP TypeScript SDK plays an editor for `zot acp` over
// stdin/stdout: it offers fs/* and terminal/*, so zot's read, edit and
// write go through its buffers and bash runs in its terminal; then it
// switches the session's mode and model. Run by `make test` (test-acp)
// with ZOT_BIN naming the binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";

const zot = process.env.ZOT_BIN;
if (!zot) {
  throw new Error("set ZOT_BIN to the zot binary (make test does)");
}

const script = {
  turns: [
    { steps: [
      { tool_calls: [{ id: "r1", name: "read", args: { path: "main.go" } }] },
      { tool_calls: [{ id: "e1", name: "edit", args: { path: "main.go", edits: [{ old_text: "unsaved", new_text: "edited" }] } }] },
      { tool_calls: [{ id: "w1", name: "write", args: { path: "notes.md", content: "# notes\n" } }] },
      { tool_calls: [{ id: "b1", name: "bash", args: { command: "echo in-the-terminal; pwd" } }] },
      { text: "Done." },
    ] },
    { steps: [
      { tool_calls: [{ id: "w2", name: "write", args: { path: "x.txt", content: "x" } }] },
      { text: "ok" },
    ] },
    { steps: [
      { tool_calls: [{ id: "t1", name: "todo", args: { entries: [
        { content: "look", status: "completed" },
        { content: "fix", status: "in_progress", priority: "high" },
      ] } }] },
      { text: "planned" },
    ] },
  ],
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zot-acp-editor-"));
const home = path.join(tmp, "home");
const work = path.join(tmp, "work");
fs.mkdirSync(work);
fs.writeFileSync(path.join(work, "main.go"), "package main // saved\n");
const scriptFile = path.join(tmp, "script.json");
fs.writeFileSync(scriptFile, JSON.stringify(script));

// The editor: buffers that differ from the disk, terminals that run
// their command in a child process.
class Editor {
  constructor() {
    this.buffers = new Map([[path.join(work, "main.go"), "package main // unsaved\n"]]);
    this.asked = [];
    this.terminals = new Map();
    this.next = 1;
  }
  read({ path: p }) {
    this.asked.push("fs/read_text_file");
    if (!this.buffers.has(p)) {
      throw RequestError.resourceNotFound(p);
    }
    return { content: this.buffers.get(p) };
  }
  write({ path: p, content }) {
    this.asked.push("fs/write_text_file");
    this.buffers.set(p, content);
    return {};
  }
  create({ command, args, cwd }) {
    this.asked.push("terminal/create");
    const id = `term-${this.next++}`;
    const t = { output: "", exit: null };
    const child = spawn(command, args ?? [], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (b) => { t.output += b; });
    child.stderr.on("data", (b) => { t.output += b; });
    t.done = new Promise((resolve) => child.on("close", (code, signal) => {
      t.exit = { exitCode: code, signal };
      resolve(t.exit);
    }));
    t.child = child;
    this.terminals.set(id, t);
    return { terminalId: id };
  }
  async waitForExit({ terminalId }) {
    this.asked.push("terminal/wait_for_exit");
    return await this.terminals.get(terminalId).done;
  }
  output({ terminalId }) {
    this.asked.push("terminal/output");
    const t = this.terminals.get(terminalId);
    return { output: t.output, truncated: false, exitStatus: t.exit ?? undefined };
  }
  kill({ terminalId }) {
    this.asked.push("terminal/kill");
    this.terminals.get(terminalId).child.kill();
    return {};
  }
  release({ terminalId }) {
    this.asked.push("terminal/release");
    this.terminals.delete(terminalId);
    return {};
  }
}

test("zot acp reads and writes through the editor and runs bash in its terminal", async (t) => {
  const proc = spawn(zot, ["acp", "--provider", "scripted", "--script", scriptFile, "--permission", "ask"], {
    env: { ...process.env, ZOT_HOME: home },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (b) => { stderr += b; });
  const exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));
  t.after(() => {
    proc.kill("SIGKILL");
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const ed = new Editor();
  const updates = [];
  const permissions = [];
  const app = client()
    .onNotification("session/update", ({ params }) => { updates.push(params.update); })
    .onRequest("session/request_permission", ({ params }) => {
      permissions.push(params.toolCall.toolCallId);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .onRequest("fs/read_text_file", ({ params }) => ed.read(params))
    .onRequest("fs/write_text_file", ({ params }) => ed.write(params))
    .onRequest("terminal/create", ({ params }) => ed.create(params))
    .onRequest("terminal/wait_for_exit", ({ params }) => ed.waitForExit(params))
    .onRequest("terminal/output", ({ params }) => ed.output(params))
    .onRequest("terminal/kill", ({ params }) => ed.kill(params))
    .onRequest("terminal/release", ({ params }) => ed.release(params));
  const conn = app.connect(ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  const agent = conn.agent;

  await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  });
  const created = await agent.request("session/new", { cwd: work, mcpServers: [] });
  const { sessionId } = created;
  assert.equal(created.modes.currentModeId, "ask");
  assert.deepEqual(created.modes.availableModes.map((m) => m.id), ["ask", "accept_edits", "auto", "read_only"]);
  const model = created.configOptions.find((o) => o.id === "model");
  assert.equal(model.type, "select");
  assert.equal(model.currentValue, "scripted");

  const res = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  assert.equal(res.stopReason, "end_turn", stderr);

  // The model saw the unsaved buffer; the edit and the write went to the
  // editor, not the disk.
  const resultOf = (id) => updates
    .filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id && u.status === "completed")
    .flatMap((u) => u.content ?? []);
  const readText = resultOf("r1").map((c) => c.content?.text ?? "").join("");
  assert.match(readText, /unsaved/);
  assert.equal(ed.buffers.get(path.join(work, "main.go")), "package main // edited\n");
  assert.equal(fs.readFileSync(path.join(work, "main.go"), "utf8"), "package main // saved\n");
  assert.equal(ed.buffers.get(path.join(work, "notes.md")), "# notes\n");
  assert.equal(fs.existsSync(path.join(work, "notes.md")), false);

  // bash ran in the editor's terminal, embedded in the call from the
  // moment it was created to its last update, and the model got its
  // output.
  assert.deepEqual(ed.asked.filter((m) => m.startsWith("terminal/")),
    ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]);
  const embeds = updates.filter((u) => u.toolCallId === "b1" && (u.content ?? []).some((c) => c.type === "terminal" && c.terminalId === "term-1"));
  assert.ok(embeds.length >= 2, JSON.stringify(updates.filter((u) => u.toolCallId === "b1")));
  const bashText = resultOf("b1").map((c) => c.content?.text ?? "").join("");
  assert.match(bashText, /in-the-terminal/);
  assert.ok(bashText.includes(work));
  assert.deepEqual(permissions, ["e1", "w1", "b1"]);

  // Full auto: the write runs without asking; the client hears the mode.
  const before = updates.length;
  await agent.request("session/set_mode", { sessionId, modeId: "auto" });
  const res2 = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "again" }] });
  assert.equal(res2.stopReason, "end_turn");
  assert.deepEqual(permissions, ["e1", "w1", "b1"]);
  assert.ok(updates.slice(before).some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "auto"));
  assert.equal(ed.buffers.get(path.join(work, "x.txt")), "x");

  // The model option takes the catalog's ids and refuses others.
  const set = await agent.request("session/set_config_option", { sessionId, configId: "model", value: "scripted" });
  assert.equal(set.configOptions[0].currentValue, "scripted");
  await assert.rejects(agent.request("session/set_config_option", { sessionId, configId: "model", value: "no-such-model" }),
    (err) => err.code === -32602);

  // Slash commands: listed after session/new, run from a prompt.
  const commands = updates.filter((u) => u.sessionUpdate === "available_commands_update").at(-1);
  assert.deepEqual(commands.availableCommands.map((c) => c.name).slice(0, 11), ["help", "compact", "clear", "model", "mode", "reload", "undo", "jail", "unjail", "skills", "agents"]);
  assert.ok(updates.some((u) => u.sessionUpdate === "session_info_update" && u.title === "go"));
  let mark = updates.length;
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/mode accept_edits" }] });
  assert.ok(updates.slice(mark).some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "accept_edits"));
  mark = updates.length;
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/model" }] });
  assert.match(updates.slice(mark).filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join(""), /Model: scripted\./);

  // The todo tool's arguments are the plan.
  mark = updates.length;
  const res3 = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "plan it" }] });
  assert.equal(res3.stopReason, "end_turn");
  const plan = updates.slice(mark).find((u) => u.sessionUpdate === "plan");
  assert.deepEqual(plan.entries, [
    { content: "look", status: "completed", priority: "medium" },
    { content: "fix", status: "in_progress", priority: "high" },
  ]);

  // The end of stdin: zot answers what is under way and exits 0.
  proc.stdin.end();
  assert.equal(await exited, 0, stderr);
  conn.close();
});
