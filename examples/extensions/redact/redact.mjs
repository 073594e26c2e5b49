#!/usr/bin/env node
// redact: an example zot extension written with zot-ext (clients/node-ext).
//
// It refuses tool calls that read .env files (read, grep, and bash commands
// that name one; a command can still reach one by a name it builds),
// replaces what looks like a secret (API keys, tokens, private keys) with
// [redacted] in the model's finished messages (the assistant_message clients are shown; text that a
// client already showed as it streamed in is not taken back), and
// /redactions says what it did.
//
// zot-ext must sit in the extension's node_modules; from a checkout of zot:
//
//   cd examples/extensions/redact && npm install --no-save --install-links ../../../clients/node-ext
//   zot ext install .

import { Extension, block, display } from "zot-ext";

const ext = new Extension("redact", "1.0.0");

const SECRETS = [
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g, // Anthropic and OpenAI keys
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, // GitHub tokens
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
let hidden = 0;
let refused = 0;

ext.interceptAssistantMessage((text) => {
  let out = text;
  for (const re of SECRETS) {
    out = out.replace(re, () => {
      hidden++;
      return "[redacted]";
    });
  }
  if (out !== text) return out; // the text clients see; the transcript keeps the model's
});

// A name .env or .env.<something>, wherever a path or a command names it:
// between anything but the characters of a name (cat .env;, $(<.env), "a/.env").
const DOT_ENV = /(^|[^\w.-])\.env(\.[\w-]+)?(?![\w.-])/;
// What each of zot's tools that reads a file's content is pointed at.
const READS = {
  read: (a) => [a.path],
  bash: (a) => [a.command],
  grep: (a) => [a.path, a.glob],
};

ext.interceptToolCall((call) => {
  const args = call.tool_args ?? {};
  const reads = (READS[call.tool_name]?.(args) ?? []).map((v) => String(v ?? ""));
  if (reads.some((r) => DOT_ENV.test(r))) {
    refused++;
    return block("redact: .env files hold secrets; ask the user for the value you need");
  }
});

ext.command("redactions", "What redact hid and refused in this session.", () =>
  display(`redact hid ${hidden} secret${hidden === 1 ? "" : "s"} and refused ${refused} read${refused === 1 ? "" : "s"} of .env files`),
);

await ext.run();
