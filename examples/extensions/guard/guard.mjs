#!/usr/bin/env node
// An example zot extension in Node, no dependencies: a guard that
// intercepts every tool call before it runs. It refuses bash commands
// that match a dangerous pattern, and rewrites risky ones into safer
// equivalents (modified_args). Its manifest says "fail_closed": true, so
// if the guard hangs or crashes, zot blocks the calls it would have
// judged rather than letting them through.
import { createInterface } from "node:readline";

const DANGER = [
  [/\brm\s+(-\S+\s+)*(\/|~|\$HOME)\/?\*?(\s|;|&|$)/, "deletes the root or home folder"],
  [/\bmkfs(\.\w+)?\b/, "formats a file system"],
  [/\bdd\b.*\bof=\/dev\//, "writes straight to a device"],
  [/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, "is a fork bomb"],
  [/\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b/, "pipes a download into a shell"],
  [/\bchmod\s+(-R\s+)?777\s+\//, "opens permissions on system folders"],
];

// Rewrites: [pattern, replacement, why].
const REWRITE = [
  [/^\s*sudo\s+/, "", "zot does not run commands as root"],
  [/\bgit\s+push\s+(.*)--force(?!-with-lease)\b/, "git push $1--force-with-lease", "force-pushes only over what was fetched"],
];

function emit(frame) {
  process.stdout.write(JSON.stringify(frame) + "\n");
}

function judge(frame) {
  if (frame.tool_name !== "bash") return {};
  const command = String(frame.tool_args?.command ?? "");
  for (const [re, why] of DANGER) {
    if (re.test(command)) {
      return { block: true, reason: `guard refused this command: it ${why}` };
    }
  }
  let rewritten = command;
  for (const [re, to, why] of REWRITE) {
    if (re.test(rewritten)) {
      rewritten = rewritten.replace(re, to);
      process.stderr.write(`rewrote a command: ${why}\n`);
    }
  }
  if (rewritten !== command) {
    return { modified_args: { ...frame.tool_args, command: rewritten } };
  }
  return {};
}

emit({ type: "hello", name: "guard", version: "1.0.0", capabilities: ["events"] });
let acked = false;
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let frame;
  try {
    frame = JSON.parse(line);
  } catch {
    process.stderr.write(`skipped a line that is not JSON: ${line}\n`);
    return;
  }
  if (!acked) {
    if (frame.type !== "hello_ack") return;
    acked = true;
    emit({ type: "subscribe", intercept: ["tool_call"] });
    emit({ type: "ready" });
    return;
  }
  switch (frame.type) {
    case "event_intercept":
      emit({ type: "event_intercept_response", id: frame.id, ...judge(frame) });
      break;
    case "shutdown":
      emit({ type: "shutdown_ack" });
      rl.close();
      break;
  }
});
