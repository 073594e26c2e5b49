// The extension methods of ZotClient against the real `zot rpc`, with the
// Python test extension of internal/exthost.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";

import { clientDir, guard, openClient, tempDir } from "./helpers.mjs";

const extScript = resolve(clientDir, "../../internal/exthost/testdata/py/ext.py");

/** Writes the test extension's folder and returns it. */
function extension(t, name = "py", mode = "ok") {
  const folder = join(tempDir(t), name);
  mkdirSync(folder);
  writeFileSync(join(folder, "extension.json"), JSON.stringify({ name, exec: "python3", args: [extScript, mode, name] }));
  return folder;
}

test("extension commands, panels and reload", async (t) => {
  const client = await openClient(t, { args: ["--ext", extension(t)] });
  const events = [];
  client.on("event", (ev) => events.push(ev));

  let { result, stream } = await guard(client.runCommand("hello-py", "display hi"), "run_command");
  assert.equal(stream, null);
  assert.deepEqual([result.extension, result.action, result.text], ["py", "display", "hi"]);

  const { commands } = await client.getCommands();
  assert.deepEqual(commands.filter((c) => c.source === "extension").map((c) => [c.name, c.extension]), [["hello-py", "py"]]);
  assert.deepEqual(commands.filter((c) => c.source === "builtin").map((c) => c.name), ["help", "compact", "clear", "model", "mode", "reload", "undo", "jail", "unjail", "skills", "agents"]);
  const { extensions } = await client.getExtensions();
  assert.deepEqual(extensions.map((e) => e.state), ["ready"]);

  ({ result } = await client.runCommand("hello-py", "panel"));
  assert.equal(result.panel.id, "p1");
  await client.panelKey("p1", "rune", "z");
  await guard(
    (async () => {
      while (!events.some((e) => e.type === "panel_render")) await new Promise((r) => setTimeout(r, 10));
    })(),
    "panel_render",
  );
  assert.deepEqual(events.find((e) => e.type === "panel_render").lines, ["key rune z"]);
  await client.closePanel("p1");
  await assert.rejects(client.panelKey("p1", "down"), { code: "not_found" });
  await assert.rejects(client.runCommand("nope"), { code: "not_found" });

  ({ result, stream } = await client.runCommand("hello-py", "go"));
  assert.equal(result.action, "prompt");
  assert.equal((await stream.start).started, true);
  const got = await guard(stream.collect(), "prompt");
  assert.equal(got.at(-1).type, "done");

  const reloaded = await guard(client.reloadExtensions(), "reload");
  assert.deepEqual(reloaded.extensions.map((e) => e.state), ["ready"]);
});
