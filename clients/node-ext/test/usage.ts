// Type-level checks of index.d.ts: compiled by `tsc -p tsconfig.json`
// (noEmit, strict), never run. The extension is written as the README and
// the examples write one, so a declaration that stops fitting fails the
// build.

import {
  Extension,
  ToolError,
  block,
  display,
  image,
  openPanel,
  prompt,
  rewrite,
  type CommandAnswer,
  type HelloAckFrame,
  type Request,
  type ToolCallFrame,
  type Verdict,
} from "../index.js";

export async function everything(): Promise<void> {
  const ext = new Extension("shout", "1.0.0");
  ext.tool(
    "shout",
    { description: "Upper-case the text.", schema: { type: "object" }, timeoutMs: 5000 },
    (args) => String(args.text).toUpperCase(),
  );
  ext.tool("picture", "A picture.", async (_args, req: Request) => {
    if (req.signal.aborted || req.remaining() < 10) throw new ToolError("too late: " + req.reason);
    return [image(new Uint8Array([137, 80, 78, 71]), "image/png"), "a dot"];
  });
  ext.tool("fails", () => ({ content: [{ type: "text", text: "no" }], is_error: true }));
  ext.command("greet", "Ask for a greeting.", (args) => prompt(`Greet ${args || "me"}.`));
  ext.command("where", () => `model ${ext.host?.model ?? "?"}`);
  ext.command("counter", () => openPanel({ id: "counter", title: "Counter", lines: ["0"] }));
  ext.command("quiet", async () => {});
  ext.interceptToolCall((call) => {
    const cmd = call.tool_name === "bash" ? String(call.tool_args?.command ?? "") : "";
    if (cmd.includes("rm -rf")) return block("refused");
    if (cmd.startsWith("sudo ")) return rewrite({ args: { command: cmd.slice(5) } });
  });
  ext.interceptTurnStart((step) => (step > 10 ? block("too many steps") : undefined));
  ext.interceptAssistantMessage((text) => text.replace("secret", "[redacted]"));
  ext.on("turn_end", (ev) => ext.log(`turn ended: ${ev.stop ?? ""}`));
  ext.onPanelKey(async (key) => {
    if (key.key === "esc") await ext.closePanel(key.panel_id);
    else await ext.renderPanel({ id: key.panel_id, lines: [key.text ?? key.key] });
  });
  ext.onPanelClose((id) => void ext.notify(`closed ${id}`, "success"));
  ext.onStart((host: HelloAckFrame) => ext.log(host.data_dir));
  await ext.run();

  const answer: CommandAnswer = display("x");
  const verdict: Verdict = block();
  const frame: ToolCallFrame = { type: "tool_call", id: "1", name: "shout", args: {} };
  void [answer, verdict, frame];
}
