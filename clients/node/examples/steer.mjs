#!/usr/bin/env node
// Steering a running prompt: steer.mjs [zot flags...] "prompt" "steer".
// zot is $ZOT_BIN, else zot on PATH.

import { ZotClient } from "../index.js";

const args = process.argv.slice(2);
const zot = new ZotClient({ args: args.slice(0, -2) });
await zot.start();
await zot.injectContext("the user is on the release branch", "example");
let steered = false;
for await (const ev of zot.prompt(args.at(-2))) {
  if (ev.type === "assistant_start" && !steered) {
    steered = (await zot.steer(args.at(-1))) === null; // null: the running prompt took it
  }
  if (ev.type === "user_message" && ev.kind) {
    process.stderr.write(`[${ev.kind}] ${ev.content[0].text.split("\n")[0]}\n`);
  }
  if (ev.type === "done" && ev.result) process.stdout.write(ev.result.text + "\n");
}
await zot.close();
