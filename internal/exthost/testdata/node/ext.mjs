// A test extension for zot's extension host in plain Node, no packages.
// argv[2] is the mode, argv[3] the extension's name (default "node").
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "ok";
const name = process.argv[3] ?? "node";
const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const note = (message) => emit({ type: "notify", level: "info", message });

if (mode === "garbage") process.stdout.write("not json\n");
emit({ type: "hello", name, version: "1.0.0" });
emit({ type: "register_command", name: `hello-${name}`, description: "say hi" });
emit({
  type: "register_tool",
  name: `${name}_echo`,
  description: "echo the text",
  schema: { type: "object", properties: { text: { type: "string" } } },
});
emit({
  type: "subscribe",
  events: ["turn_start", "tool_call", "turn_end"],
  intercept: mode === "guard" ? ["tool_call"] : [],
});
emit({ type: "ready" });

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "tool_call":
      if (mode === "crash_on_tool") process.exit(4);
      emit({ type: "tool_result", id: msg.id, content: [{ type: "text", text: `echo: ${msg.args.text ?? ""}` }] });
      break;
    case "command_invoked":
      emit({ type: "command_response", id: msg.id, action: "display", display: `node says ${msg.args}` });
      break;
    case "event_intercept": {
      const bad = JSON.stringify(msg.tool_args ?? {}).includes("rm -rf");
      emit(bad
        ? { type: "event_intercept_response", id: msg.id, block: true, reason: "node refuses rm -rf" }
        : { type: "event_intercept_response", id: msg.id });
      break;
    }
    case "event":
      note(`event ${msg.event} ${msg.step ?? msg.tool_name ?? msg.stop ?? ""}`);
      break;
    case "shutdown":
      emit({ type: "shutdown_ack" });
      rl.close();
      process.exit(0);
  }
});
