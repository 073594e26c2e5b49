// clock: a zot extension in the shape of zot's own Node examples, run as
// `node index.js` from its own folder. No dependencies.
const readline = require("readline");
const { stamp } = require("./format");

const send = (frame) => process.stdout.write(JSON.stringify(frame) + "\n");

send({ type: "hello", name: "clock", version: "1.0.0", capabilities: ["commands", "events"] });

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let f;
  try {
    f = JSON.parse(line);
  } catch {
    return;
  }
  switch (f.type) {
    case "hello_ack":
      send({ type: "register_command", name: "clock", description: "show the time" });
      send({ type: "subscribe", events: ["session_start", "turn_start"] });
      send({ type: "ready" });
      break;
    case "event":
      if (f.event === "turn_start") {
        send({ type: "notify", level: "info", message: `clock saw turn_start step=${f.step}` });
      }
      break;
    case "command_invoked":
      send({ type: "command_response", id: f.id, action: "display", display: `clock: ${stamp(new Date())} in ${process.cwd()}` });
      break;
    case "shutdown":
      process.exit(0);
  }
});
rl.on("close", () => process.exit(0));
