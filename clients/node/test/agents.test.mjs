// Sub-agents (the task tool) through ZotClient against the real zot.

import assert from "node:assert/strict";
import { test } from "node:test";

import { guard, openClient, writeScript } from "./helpers.mjs";

const script = {
  turns: [
    { steps: [
      { tool_calls: [{ id: "t1", name: "task", args: { description: "list files", prompt: "child: list the files" } }] },
      { text: "The child is done." },
    ] },
    { match: "child:", steps: [{ tool_calls: [{ name: "ls", args: {} }] }, { text: "two files" }] },
  ],
};

test("hello with childEvents brings a sub-agent's events, nested under its task call", async (t) => {
  const zot = await openClient(t, { args: ["--script", writeScript(t, script)] });
  const hello = await zot.hello(undefined, { childEvents: true });
  assert.equal(hello.child_events, true);
  const events = await guard(zot.prompt("go").collect(), "prompt");
  const child = events.filter((e) => e.type === "child_event");
  assert.ok(child.length > 0, "no child_event");
  for (const c of child) assert.equal(c.parent_id, "t1");
  assert.equal(child[0].event.type, "user_message");
  assert.ok(!child.some((c) => c.event.type === "done"), "a child's done was sent");
  const result = events.find((e) => e.type === "tool_result" && e.id === "t1");
  assert.equal(JSON.parse(result.content[0].text).text, "two files");
});

test("without childEvents only the task call's own events come", async (t) => {
  const zot = await openClient(t, { args: ["--script", writeScript(t, script)] });
  await zot.hello();
  const events = await guard(zot.prompt("go").collect(), "prompt");
  assert.equal(events.filter((e) => e.type === "child_event").length, 0);
  const progress = events.filter((e) => e.type === "tool_progress" && e.id === "t1").map((e) => e.text).join("");
  assert.match(progress, /list files: step 1: ls/);
});
