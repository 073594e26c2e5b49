#!/usr/bin/env node
// A JavaScript function as a tool the model calls: tool.mjs [zot flags...] "message".
// zot is $ZOT_BIN, else zot on PATH.

import { ZotClient } from "../index.js";

const args = process.argv.slice(2);
const zot = new ZotClient({ args: args.slice(0, -1) });
await zot.start();
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
await zot.tool("weather", { description: "The weather in a city.", schema, readOnly: true }, ({ city }) => `fog and 12 degrees in ${city}`);

for await (const ev of zot.prompt(args.at(-1))) {
  if (ev.type === "tool_result") process.stderr.write(`[weather] ${ev.content[0].text}\n`);
  if (ev.type === "text_delta") process.stdout.write(ev.delta);
}
process.stdout.write("\n");
await zot.close();
