// The session-defaults methods of ZotClient and a prompt's own limits,
// against the real `zot rpc`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { guard, openClient } from "./helpers.mjs";

test("getCapabilities, getConfig, patchConfig, setConfig, prompt overrides", async (t) => {
  const client = await openClient(t, {});
  const caps = await client.getCapabilities();
  assert.equal(caps.provider, "scripted");
  assert.ok(caps.features.includes("session_config"));
  assert.equal((await client.getConfig()).model, "scripted");
  const patched = await client.patchConfig({ max_steps: 3, max_cost_usd: 0.5 });
  assert.equal(patched.max_steps, 3);
  assert.equal(patched.max_cost_usd, 0.5);
  assert.equal((await client.patchConfig({ max_cost_usd: null })).max_cost_usd, undefined);
  assert.equal((await client.setConfig({ model: "scripted", max_steps: 7 })).max_steps, 7);
  await assert.rejects(client.patchConfig({ max_steps: 0 }), { code: "invalid_params" });
  await guard(client.prompt("hi", undefined, { maxSteps: 2, maxTokens: 100 }).collect(), "prompt");
  assert.equal((await client.getConfig()).max_steps, 7);
});
