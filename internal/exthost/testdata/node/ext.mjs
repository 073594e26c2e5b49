// A test extension for zot's extension host in plain Node, no packages.
// argv[2] is the mode, argv[3] the extension's name (default "node").
// Modes: ok; guard (blocks tool calls with "rm -rf"); and the misbehaving
// ones: silent (never says hello), garbage (writes frames that are not
// JSON, too long, of an unknown type, or answer nothing), crash_on_tool
// (exits with status 4 on a tool call), hang_intercept (never answers an
// intercept), stubborn (ignores shutdown, the end of its input and
// SIGTERM). Its <name>_slow tool never answers.
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "ok";
const name = process.argv[3] ?? "node";
const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const note = (message) => emit({ type: "notify", level: "info", message });
const keepAlive = () => setInterval(() => {}, 1 << 30);

if (mode === "silent") {
  keepAlive();
} else {
  start();
}

function start() {
  if (mode === "garbage") process.stdout.write("not json\n");
  emit({ type: "hello", name, version: "1.0.0" });
  if (mode === "garbage") {
    process.stdout.write("still not json {\n");
    process.stdout.write("x".repeat(5000) + "\n"); // over the test's frame limit
    emit({ type: "teleport" });
    emit({ type: "tool_result", id: "999", content: [] });
  }
  if (mode === "stubborn") {
    process.on("SIGTERM", () => note("SIGTERM ignored"));
    keepAlive();
  }
  emit({ type: "register_command", name: `hello-${name}`, description: "say hi" });
  emit({
    type: "register_tool",
    name: `${name}_echo`,
    description: "echo the text",
    schema: { type: "object", properties: { text: { type: "string" } } },
  });
  emit({ type: "register_tool", name: `${name}_slow`, description: "never answers", timeout_ms: 300 });
  emit({
    type: "subscribe",
    events: ["turn_start", "tool_call", "turn_end"],
    intercept: mode === "guard" || mode === "hang_intercept" ? ["tool_call"] : [],
  });
  emit({ type: "ready" });

  const rl = createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    const msg = JSON.parse(line);
    switch (msg.type) {
      case "tool_call":
        if (msg.name === `${name}_slow`) break;
        if (mode === "crash_on_tool") process.exit(4);
        emit({ type: "tool_result", id: msg.id, content: [{ type: "text", text: `echo: ${msg.args.text ?? ""}` }] });
        break;
      case "command_invoked":
        emit({ type: "command_response", id: msg.id, action: "display", display: `node says ${msg.args}` });
        break;
      case "event_intercept": {
        if (mode === "hang_intercept") break;
        const bad = JSON.stringify(msg.tool_args ?? {}).includes("rm -rf");
        emit(bad
          ? { type: "event_intercept_response", id: msg.id, block: true, reason: "node refuses rm -rf" }
          : { type: "event_intercept_response", id: msg.id });
        break;
      }
      case "event":
        note(`event ${msg.event} ${msg.step ?? msg.tool_name ?? msg.stop ?? ""}`);
        break;
      case "cancel":
        note(`cancel ${msg.id} ${msg.reason ?? ""}`);
        break;
      case "shutdown":
        if (mode === "stubborn") {
          note("shutdown ignored");
          break;
        }
        emit({ type: "shutdown_ack" });
        rl.close();
        process.exit(0);
    }
  });
}
