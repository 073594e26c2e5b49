// Type-level checks of index.d.ts: compiled by `tsc -p tsconfig.json`
// (noEmit, strict), never run. Each function uses the client the way the
// README and the examples do, so a declaration that stops fitting fails
// the build.

import { ZotClient, ZotError, type PromptStream } from "../index.js";
import type { ClientErrorCode, ErrorCode, Event, StartResult, StateResult } from "../index.js";

export async function fullSession(bin: string): Promise<string> {
  const client = new ZotClient({
    bin,
    args: ["--provider", "scripted"],
    env: { ZOTCORE_RPC_TOKEN: undefined },
    stderr: (text: string) => void text,
  });
  await client.start();
  const hello = await client.hello("secret");
  const protocol: number = hello.protocol_version;
  const stream: PromptStream = client.prompt("hi", [{ mime_type: "image/png", data: "iVBORw0KGgo=" }]);
  const start: StartResult = await stream.start;
  let text = `${protocol} ${start.started} ${start.position ?? 0}`;
  for await (const ev of stream) {
    switch (ev.type) {
      case "text_delta":
        text += ev.delta;
        break;
      case "tool_call":
        text += ev.name;
        break;
      case "usage":
        text += ev.cumulative.cost_usd.toFixed(4);
        break;
      case "turn_end":
        text += ev.stop;
        break;
      default:
        break;
    }
  }
  const compacted: Event[] = await client.compact("keep the numbers").collect();
  const state: StateResult = await client.getState();
  const messages = (await client.getMessages()).messages;
  const models = (await client.getModels()).models.map((m) => m.id);
  const model: string = (await client.setModel(models[0] ?? "scripted")).model;
  const aborted: boolean = (await client.abort({ all: true })).aborted;
  const pong: true = (await client.ping()).pong;
  await client.clear();
  client.on("event", (ev: Event) => void ev.seq);
  client.on("exit", (code: number | null) => void code);
  const { code } = await client.close();
  return `${text}${compacted.length}${state.busy}${messages.length}${model}${aborted}${pong}${code}`;
}

export function codeOf(err: unknown): ErrorCode | ClientErrorCode | undefined {
  return err instanceof ZotError ? err.code : undefined;
}

export async function abortable(client: ZotClient, signal: AbortSignal): Promise<number> {
  const stream = client.prompt("a long task", undefined, { signal });
  const compacted = client.compact(undefined, { signal: AbortSignal.timeout(1000) });
  const stopped = (await stream.collect()).filter((ev) => ev.type === "turn_end" && ev.stop === "aborted");
  const aborted: ClientErrorCode = "aborted";
  return stopped.length + (await compacted.collect()).length + aborted.length;
}

export async function approving(bin: string): Promise<void> {
  const client = new ZotClient({
    bin,
    args: ["--provider", "scripted", "--approve"],
    onPermissionRequest: async (req) => (req.tool === "bash" ? { decision: "reject", reason: `not ${req.args}` } : "allow_once"),
  });
  await client.start();
  const hello = await client.hello(undefined, { protocolVersion: 1, client: { name: "usage", version: "0" } });
  for await (const ev of client.prompt("go")) {
    if (ev.type === "permission_request") {
      const id: string = ev.request_id;
      const call: string = ev.call_id;
      const wait: number | undefined = ev.timeout_ms;
      await client.answerPermission(id, "allow_always", `${call} ${wait ?? 0} ${hello.protocol_version}`);
    }
  }
  await client.close();
}
