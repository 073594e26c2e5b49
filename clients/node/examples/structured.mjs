#!/usr/bin/env node
// An answer in a JSON shape, and the prompt's record: structured.mjs [zot flags...] "question".
// zot is $ZOT_BIN, else zot on PATH.

import { ZotClient } from "../index.js";

const args = process.argv.slice(2);
const zot = new ZotClient({ args: args.slice(0, -1) });
await zot.start();
const outputSchema = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "integer" } },
  required: ["city", "population"],
};
const res = await zot.run(args.at(-1), { outputSchema });
process.stdout.write(JSON.stringify(res.structured) + "\n");
const u = res.usage;
process.stderr.write(`${res.stop}: ${res.turns} turns, ${res.tool_calls} tool calls, ${u.input}+${u.output} tokens, $${u.cost_usd.toFixed(4)}\n`);
await zot.close();
