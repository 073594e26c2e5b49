// zot-ext extensions driven through the real `zot rpc --provider scripted
// --ext <dir>`: a tool, a command, an intercept and a panel, each as a
// user of the package writes them, and the protocol's hard parts (cancel,
// deadlines, errors, shutdown, stdout kept for frames).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { extension, open, packageDir, ready, resultText, waitFor } from "./helpers.mjs";

// One extension with a bit of everything, as an author would write it.
const EVERYTHING = `
import { execFileSync } from "node:child_process";
import { Extension, CommandError, ToolError, block, openPanel, prompt, rewrite } from "zot-ext";

const ext = new Extension("nodex", "1.2.3");

ext.tool("shout", { description: "Upper-case the text.", schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }, (args) => {
  console.log("a stray console.log goes to the log, not to zot");
  process.stdout.write("so does a direct write\\n");
  return args.text.toUpperCase();
});
ext.tool("lookup", "Look a city up.", (args) => {
  throw new ToolError("no such city: " + (args.city ?? "?"));
});
ext.tool("crash", "Fails by accident.", (args) => args.missing.deeper);
ext.tool("slow", { description: "Takes longer than zot waits.", timeoutMs: 300 }, async (args, request) => {
  await new Promise((resolve) => request.signal.addEventListener("abort", resolve));
  await ext.notify("slow gave up: " + request.reason, "warn");
  return "too late";
});

ext.command("greet", "Ask the model to greet someone.", (args) => prompt("Greet " + (args || "me") + " briefly."));
ext.command("where", "Show the host's model", () => "model " + ext.host.model + " in " + ext.host.cwd);
ext.command("broken", () => { throw new CommandError("no city given"); });
ext.command("oops", () => null.x);

ext.interceptToolCall((call) => {
  const command = call.tool_name === "bash" ? String(call.tool_args?.command ?? "") : "";
  if (command.includes("rm -rf")) return block("refused: rm -rf");
  if (command.startsWith("sudo ")) return rewrite({ args: { command: command.slice(5) } });
});

let count = 0;
ext.command("counter", "A counter: up and down change it.", () =>
  openPanel({ id: "counter", title: "Counter", lines: [String(count)], footer: "up/down, esc" }));
ext.onPanelKey(async (key) => {
  count += key.key === "up" ? 1 : key.key === "down" ? -1 : 0;
  // A slow redraw must not let a later key overtake this one.
  await new Promise((resolve) => setTimeout(resolve, count % 3));
  await ext.renderPanel({ id: key.panel_id, title: "Counter", lines: [String(count)] });
});
ext.onPanelClose((id) => ext.notify("closed " + id));
ext.on("turn_start", (ev) => ext.notify("turn " + ev.step));

await ext.run();
`;

const notices = (events, prefix) => events.filter((e) => e.type === "ext_notify" && e.message.startsWith(prefix));

test("tools: results, errors and cancel", async (t) => {
  const folder = extension(t, "nodex", EVERYTHING);
  const { client, events, log, close } = await open(t, folder, {
    turns: [
      {
        steps: [
          {
            tool_calls: [
              { id: "t1", name: "shout", args: { text: "hello" } },
              { id: "t2", name: "lookup", args: { city: "Atlantis" } },
              { id: "t3", name: "crash", args: {} },
              { id: "t4", name: "slow", args: {} },
            ],
          },
          { text: "done" },
        ],
      },
    ],
  });
  const exts = await ready(client);
  assert.deepEqual(exts.map((e) => [e.name, e.state]), [["nodex", "ready"]]);
  assert.deepEqual([...exts[0].tools].sort(), ["crash", "lookup", "shout", "slow"]);

  const got = await client.prompt("go").collect();
  const results = Object.fromEntries(got.filter((e) => e.type === "tool_result").map((e) => [e.id, e]));
  assert.deepEqual([resultText(results.t1), results.t1.is_error], ["HELLO", false]);
  assert.deepEqual([resultText(results.t2), results.t2.is_error], ["no such city: Atlantis", true]);
  assert.equal(results.t3.is_error, true);
  assert.match(resultText(results.t3), /tool crash failed: TypeError/);
  assert.equal(results.t4.is_error, true);
  // zot's cancel reached the handler, whose late answer was not sent.
  const [note] = await waitFor("the slow tool's notice", () => notices(events, "slow gave up").length && notices(events, "slow gave up"));
  assert.deepEqual([note.message, note.level], ["slow gave up: timeout", "warn"]);

  await close();
  const text = log();
  assert.match(text, /a stray console\.log goes to the log/);
  assert.match(text, /so does a direct write/);
  assert.doesNotMatch(text, /skipped a frame|dropped a tool_result|had to be/);
  assert.match(text, /\[zot\] shutdown acknowledged/);
});

test("commands: prompt, display and errors", async (t) => {
  const { client, work } = await open(t, extension(t, "nodex", EVERYTHING));
  await ready(client);
  const { commands } = await client.getCommands();
  const desc = Object.fromEntries(commands.map((c) => [c.name, c.description]));
  assert.equal(desc.greet, "Ask the model to greet someone.");

  let { result, stream } = await client.runCommand("greet", "Ada");
  assert.deepEqual([result.extension, result.action, result.text], ["nodex", "prompt", "Greet Ada briefly."]);
  assert.equal((await stream.collect()).at(-1).type, "done");

  ({ result } = await client.runCommand("where"));
  assert.equal(result.action, "display");
  assert.equal(result.text, `model ${(await client.getState()).model} in ${work}`);
  ({ result } = await client.runCommand("broken"));
  assert.equal(result.error, "no city given");
  ({ result } = await client.runCommand("oops"));
  assert.match(result.error, /command oops failed: TypeError/);
});

test("intercept: a tool call blocked, one rewritten; events in order", async (t) => {
  const folder = extension(t, "nodex", EVERYTHING);
  const { client, events } = await open(t, folder, {
    turns: [
      {
        steps: [
          {
            tool_calls: [
              { id: "b1", name: "bash", args: { command: "rm -rf /tmp/nothing-here" } },
              { id: "b2", name: "bash", args: { command: "sudo echo rewritten-ok" } },
              { id: "b3", name: "bash", args: { command: "echo plain" } },
            ],
          },
          { text: "done" },
        ],
      },
    ],
  });
  await ready(client);
  const got = await client.prompt("clean up").collect();
  const results = Object.fromEntries(got.filter((e) => e.type === "tool_result").map((e) => [e.id, e]));
  assert.equal(results.b1.is_error, true);
  assert.match(resultText(results.b1), /refused: rm -rf/);
  assert.equal(results.b2.is_error, false);
  assert.ok(resultText(results.b2).startsWith("rewritten-ok\n"), resultText(results.b2));
  assert.ok(resultText(results.b3).startsWith("plain\n"), resultText(results.b3));
  const turns = await waitFor("turn notices", () => notices(events, "turn ").length >= 2 && notices(events, "turn "));
  assert.deepEqual(turns.slice(0, 2).map((e) => e.message), ["turn 1", "turn 2"]);
});

test("panel: keys apply in order", async (t) => {
  const { client, events } = await open(t, extension(t, "nodex", EVERYTHING));
  const { result } = await client.runCommand("counter");
  assert.equal(result.action, "open_panel");
  assert.deepEqual([result.panel.id, result.panel.title, result.panel.lines], ["counter", "Counter", ["0"]]);
  const keys = [...Array(12).fill("up"), ...Array(5).fill("down")];
  for (const k of keys) await client.panelKey("counter", k);
  const renders = await waitFor("every render", () => {
    const r = events.filter((e) => e.type === "panel_render");
    return r.length === keys.length && r;
  });
  let n = 0;
  assert.deepEqual(renders.map((r) => r.lines), keys.map((k) => [String((n += k === "up" ? 1 : -1))]));
  await client.closePanel("counter");
  await waitFor("the close notice", () => notices(events, "closed counter").length);
});

test("the README's example works as written", async (t) => {
  const readme = readFileSync(join(packageDir, "README.md"), "utf8");
  const code = readme.split("```js\n")[1].split("```")[0];
  const folder = extension(t, "shout", code.slice(code.indexOf("\n") + 1)); // its own #! line is replaced
  const { client } = await open(t, folder, {
    turns: [
      {
        steps: [
          {
            tool_calls: [
              { id: "s", name: "shout", args: { text: "quiet" } },
              { id: "b", name: "bash", args: { command: "rm -rf / --no-preserve-root" } },
            ],
          },
          { text: "done" },
        ],
      },
    ],
  });
  const got = await client.prompt("go").collect();
  const results = Object.fromEntries(got.filter((e) => e.type === "tool_result").map((e) => [e.id, e]));
  assert.equal(resultText(results.s), "QUIET");
  assert.equal(results.b.is_error, true);
  assert.match(resultText(results.b), /refused: rm -rf \//);
  const { result, stream } = await client.runCommand("greet", "Ada");
  assert.deepEqual([result.action, result.text], ["prompt", "Greet Ada in one sentence."]);
  await stream.collect();
});

// Answers an author gets wrong: each fails the one request with a message
// that says why, and the extension goes on answering the next ones.
const WRONG = `
import { Extension, rewrite } from "zot-ext";

const ext = new Extension("wrong");
const quick = { timeoutMs: 5000 };
ext.tool("weather", { description: "Returns an object, not text.", ...quick }, () => ({ temp: 20, sky: "clear" }));
ext.tool("count", { description: "Returns text that JSON cannot hold.", ...quick }, () => ({ type: "text", text: 10n }));
ext.interceptToolCall((call) => {
  if (call.tool_name !== "bash") return;
  const args = { command: "echo loop" };
  args.self = args;
  return rewrite({ args });
});
ext.command("hi", "Still answers.", () => "still here");
ext.command("typo", "Answers an action zot does not take.", () => ({ action: "displya", display: "x" }));

await ext.run();
`;

test("answers that cannot be sent fail their request, and the extension keeps answering", async (t) => {
  const { client } = await open(t, extension(t, "wrong", WRONG), {
    turns: [
      {
        steps: [
          {
            tool_calls: [
              { id: "w", name: "weather", args: {} },
              { id: "c", name: "count", args: {} },
              { id: "b", name: "bash", args: { command: "echo hi" } },
            ],
          },
          { text: "done" },
        ],
      },
    ],
  });
  await ready(client);
  const got = await client.prompt("go").collect();
  const results = Object.fromEntries(got.filter((e) => e.type === "tool_result").map((e) => [e.id, e]));
  assert.equal(results.w.is_error, true);
  assert.match(resultText(results.w), /tool weather failed: TypeError: .*not text, an image nor \{content, is_error\}.*JSON\.stringify/);
  assert.equal(results.c.is_error, true);
  assert.match(resultText(results.c), /tool count failed: .*cannot be sent as JSON.*BigInt/);
  assert.equal(results.b.is_error, true);
  assert.match(resultText(results.b), /guard failed: .*cannot be sent as JSON.*circular/);
  const { result } = await client.runCommand("hi");
  assert.deepEqual([result.action, result.text], ["display", "still here"]);
  const { result: typo } = await client.runCommand("typo");
  assert.match(typo.error ?? "", /command typo failed: TypeError: the answer's action is "displya", not one of prompt, insert, display, open_panel, noop/);
});
