#!/usr/bin/env node
// Runs one prompt through `zot rpc` and prints the answer.
//
//   node examples/prompt.mjs [--zot PATH] [-- ZOT_FLAGS...] MESSAGE
//
// The answer's text goes to stdout as it streams; tool calls and usage go
// to stderr. Exits 0 when the prompt is done, 1 when it failed (an `error`
// event) or zot could not be run, 2 on bad arguments. PATH defaults to
// $ZOT_BIN, else zot on PATH, as in every client. Example, offline:
//
//   node examples/prompt.mjs --zot bin/zot -- --provider scripted "hello"

import { ZotClient, ZotError } from "../index.js";

const USAGE = "usage: prompt.mjs [--zot PATH] [-- ZOT_FLAGS...] MESSAGE";

/**
 * Splits the command line into the binary, zot's flags and the message.
 * @param {string[]} argv
 */
function parseArgs(argv) {
  /** @type {string | undefined} the client's default: $ZOT_BIN, else zot on PATH */
  let bin;
  let i = 0;
  if (argv[i] === "--zot") {
    if (argv.length < i + 2) return null;
    bin = argv[i + 1];
    i += 2;
  }
  if (argv[i] === "--") i++;
  const rest = argv.slice(i);
  if (rest.length === 0) return null;
  return { bin, flags: rest.slice(0, -1), message: /** @type {string} */ (rest.at(-1)) };
}

/** @param {string[]} argv */
async function main(argv) {
  const args = parseArgs(argv);
  if (!args) {
    process.stderr.write(USAGE + "\n");
    return 2;
  }
  const client = new ZotClient({ bin: args.bin, args: args.flags });
  let failed = false;
  let last = ""; // the end of the text written so far
  let apart = false; // the next text starts a message after one with text
  // note writes a line to stderr, ending the text's line first: on a
  // terminal the two streams share the screen.
  const note = (/** @type {string} */ line) => {
    if (last && !last.endsWith("\n")) {
      process.stdout.write("\n");
      last = "\n";
    }
    process.stderr.write(line);
  };
  try {
    await client.start();
    for await (const ev of client.prompt(args.message)) {
      switch (ev.type) {
        case "text_delta":
          if (ev.delta && apart) {
            process.stdout.write("\n"); // a blank line between two messages' texts
            apart = false;
          }
          process.stdout.write(ev.delta);
          last = ev.delta || last;
          break;
        case "assistant_message":
          // A message ended: end its line (before stderr lines), and set
          // the next message's text apart.
          if (last && !last.endsWith("\n")) {
            process.stdout.write("\n");
            last = "\n";
          }
          apart = last !== "";
          break;
        case "tool_call":
          note(`[tool] ${ev.name} ${JSON.stringify(ev.args)}\n`);
          break;
        case "usage":
          note(
            `[usage] in ${ev.input} out ${ev.output} cache ${ev.cache_read}/${ev.cache_write}` +
              ` cost ${money(ev.cost_usd, ev.cost_unknown)} (total ${money(ev.cumulative.cost_usd, ev.cumulative.cost_unknown)})\n`,
          );
          break;
        case "error":
          failed = true;
          note(`error: ${ev.message}${ev.code ? ` (${ev.code})` : ""}\n`);
          break;
        default:
          break; // other and newer events are not shown
      }
    }
  } catch (err) {
    const code = err instanceof ZotError ? ` (${err.code})` : "";
    process.stderr.write(`prompt.mjs: ${err instanceof Error ? err.message : err}${code}\n`);
    failed = true;
  } finally {
    await client.close();
  }
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));

// A cost in dollars, "unknown" for a model without known prices (never $0,
// which would read as free), and a known part "+ unknown" for a total that
// includes such calls.
function money(usd, unknown) {
  if (!unknown) return `$${usd.toFixed(6)}`;
  return usd > 0 ? `$${usd.toFixed(6)} + unknown` : "unknown";
}
