// Declarations of zot-ext (index.js). The frames' types are generated from
// zot's JSON Schema into types.d.ts; what follows is written by hand.

import type {
  CommandResponseFrame,
  EventFrame,
  EventInterceptFrame,
  EventInterceptResponseFrame,
  EventName,
  HelloAckFrame,
  ImageContent,
  KeyName,
  NotifyLevel,
  Panel,
  TextContent,
  ToolContent,
  ToolResultFrame,
} from "./types.js";

export type * from "./types.js";

/** How long zot waits for each kind of answer, in milliseconds. */
export declare const TOOL_TIMEOUT_MS: number;
export declare const COMMAND_TIMEOUT_MS: number;
export declare const INTERCEPT_TIMEOUT_MS: number;

/** A request zot waits on. */
export interface Request {
  /** The request's id. */
  readonly id: string;
  /** When zot's wait ends, in Date.now() milliseconds. */
  readonly deadline: number;
  /** Aborted when zot gives the request up (timeout, aborted prompt, shutdown); an answer after that is not sent. */
  readonly signal: AbortSignal;
  /** Why zot gave up: "timeout", "aborted" or "shutdown"; empty before. */
  readonly reason: string;
  /** Milliseconds until the deadline (0 once it passed). */
  remaining(): number;
}

type MaybePromise<T> = T | Promise<T>;

/** What a tool returns: text, a content block, a list of them, or a whole result. */
export type ToolReturn =
  | string
  | ToolContent
  | Array<string | ToolContent>
  | Omit<ToolResultFrame, "type" | "id">
  | void;

/** What a command returns: an answer (prompt(), insert(), display(), openPanel(), noop()), a string to display, or nothing. */
export type CommandAnswer = Omit<CommandResponseFrame, "type" | "id">;
export type CommandReturn = CommandAnswer | string | void;

/** An intercept's verdict: block(), rewrite(), or nothing (allow). */
export type Verdict = Omit<EventInterceptResponseFrame, "type" | "id">;

/** A key pressed in one of the extension's panels. */
export interface PanelKey {
  panel_id: string;
  key: KeyName;
  text?: string;
}

export interface ToolOptions {
  /** What the tool does and when to use it, for the model. */
  description?: string;
  /** The JSON Schema of its arguments (an object schema). */
  schema?: Record<string, unknown>;
  /** How long zot waits for its result, in milliseconds (default 60000). */
  timeoutMs?: number;
  /**
   * The tool changes nothing: it only reads or computes. It then runs in a
   * session's read-only mode and is not asked about; any other tool is
   * refused there, and asked about where the mode asks before commands.
   */
  readOnly?: boolean;
}

/** Thrown by a tool: the model gets the message as a failed result. */
export declare class ToolError extends Error {}
/** Thrown by a command: zot shows the message as the command's error. */
export declare class CommandError extends Error {}
/** notify, renderPanel or closePanel was called while the extension was not serving zot. */
export declare class NotRunningError extends Error {}

export declare function text(text: string): TextContent;
export declare function image(data: Uint8Array | string, mimeType?: string): ImageContent;
export declare function prompt(text: string): CommandAnswer;
export declare function insert(text: string): CommandAnswer;
export declare function display(text: string): CommandAnswer;
export declare function openPanel(panel: Panel): CommandAnswer;
export declare function noop(): CommandAnswer;
export declare function block(reason?: string): Verdict;
export declare function rewrite(change: { args?: Record<string, unknown>; text?: string }): Verdict;

/** One extension: what it offers zot and the callbacks that answer. */
export declare class Extension {
  constructor(name: string, version?: string, options?: { log?: (line: string) => void });
  readonly name: string;
  readonly version: string;
  /** What zot said in hello_ack; null before it arrived. */
  readonly host: HelloAckFrame | null;

  tool(
    name: string,
    options: ToolOptions | string,
    fn: (args: Record<string, any>, request: Request) => MaybePromise<ToolReturn>,
  ): this;
  tool(name: string, fn: (args: Record<string, any>, request: Request) => MaybePromise<ToolReturn>): this;
  command(name: string, description: string, fn: (args: string, request: Request) => MaybePromise<CommandReturn>): this;
  command(name: string, fn: (args: string, request: Request) => MaybePromise<CommandReturn>): this;
  on(event: EventName, fn: (event: EventFrame) => MaybePromise<void>): this;
  /**
   * The intercepts: a second one of the same event is chained after the
   * first, not put in its place. They are asked in the order they were
   * added: the first block wins, and each judges what the ones before
   * rewrote.
   */
  interceptToolCall(fn: (call: EventInterceptFrame, request: Request) => MaybePromise<Verdict | boolean | void>): this;
  interceptTurnStart(fn: (step: number, request: Request) => MaybePromise<Verdict | boolean | void>): this;
  interceptAssistantMessage(fn: (text: string, request: Request) => MaybePromise<Verdict | string | boolean | void>): this;
  onPanelKey(fn: (key: PanelKey) => MaybePromise<void>): this;
  onPanelClose(fn: (panelId: string) => MaybePromise<void>): this;
  onStart(fn: (host: HelloAckFrame) => MaybePromise<void>): this;

  notify(message: string, level?: NotifyLevel): Promise<void>;
  renderPanel(panel: Panel): Promise<void>;
  closePanel(panelId: string): Promise<void>;
  log(message: string): void;

  /** Serves zot on stdin and stdout; the process exits at shutdown or the end of stdin. */
  run(): Promise<void>;
  /** Serves zot on any streams, for tests: resolves after shutdown or the end of input. */
  serve(input: { on(event: string, listener: (...args: any[]) => void): unknown }, output: { write(line: string): unknown }): Promise<void>;
}
