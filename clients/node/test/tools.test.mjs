// Client tools against the real `zot rpc`: a function registered with
// tool() is called with the model's arguments and its return value is the
// tool's result; a throw is a failed call; a call zot ends first (an
// abort) aborts the function's signal; a taken name is name_taken.

import assert from "node:assert/strict";
import { test } from "node:test";

import { guard, openClient, writeScript } from "./helpers.mjs";

/** @param {[string, object][]} calls */
function calls(calls) {
  return { turns: calls.map(([name, args]) => ({ steps: [{ tool_calls: [{ name, args }] }, { text: "done" }] })) };
}

/** @param {any[]} evs */
const resultOf = (evs) => evs.find((e) => e.type === "tool_result");

test("registered functions run when the model calls them", async (t) => {
  const script = writeScript(t, calls([["weather", { city: "Oslo" }], ["broken", {}], ["waits", {}]]));
  const client = await openClient(t, { args: ["--script", script] });
  const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
  assert.deepEqual(await client.tool("weather", { description: "The weather in a city.", schema, readOnly: true }, ({ city }) => `fog in ${city}`), ["weather"]);
  await client.tool("broken", {}, () => {
    throw new Error("the service is down");
  });
  let aborted;
  /** @type {() => void} */
  let resolveStarted = () => {};
  const started = new Promise((resolve) => (resolveStarted = resolve));
  await client.tool("waits", { readOnly: true }, (_args, { signal }) => {
    resolveStarted();
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve((aborted = "aborted"))));
  });

  const evs = await guard(client.prompt("weather in Oslo").collect(), "weather");
  const call = evs.find((e) => e.type === "client_tool_call");
  assert.deepEqual([call.tool, call.args], ["weather", { city: "Oslo" }]);
  assert.deepEqual([resultOf(evs).is_error, resultOf(evs).content[0].text], [false, "fog in Oslo"]);

  const broken = resultOf(await guard(client.prompt("broken").collect(), "broken"));
  assert.deepEqual([broken.is_error, broken.content[0].text], [true, "the service is down"]);

  const stream = client.prompt("waits");
  await guard(started, "the call");
  await client.abort();
  const waits = resultOf(await guard(stream.collect(), "aborted call"));
  assert.deepEqual([waits.is_error, waits.content[0].text], [true, "aborted"]);
  assert.equal(aborted, "aborted");

  await assert.rejects(client.tool("bash", {}, () => ""), (err) => err.code === "name_taken");
  assert.deepEqual(await client.unregisterTools(["broken"]), ["waits", "weather"]);
  await assert.rejects(client.unregisterTools(["broken"]), (err) => err.code === "not_found");
  assert.deepEqual(await client.unregisterTools(), []);
});
