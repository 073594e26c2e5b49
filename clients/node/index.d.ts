// Declarations for index.js, zot's Node reference client. The protocol's
// own types come from types.d.ts, generated from the schema.

import type {
  AbortResult,
  ClientToolCallEvent,
  CommandsResult,
  ExtensionsResult,
  ForkSessionResult,
  MCPServer,
  MCPServersResult,
  PanelKey,
  RunCommandResult,
  ErrorCode,
  Event,
  HelloResult,
  ImageInput,
  MessagesResult,
  PermissionDecision,
  PermissionRequestEvent,
  ModelsResult,
  PingResult,
  PromptResult,
  Response,
  SessionInfo,
  SetModelResult,
  SetModeResult,
  SandboxMode,
  SandboxState,
  UndoResult,
  ListSkillsResult,
  ListAgentsResult,
  GetSkillResult,
  PermissionMode,
  StartResult,
  StateResult,
  SessionDefaults,
  CapabilitiesResult,
} from "./types.js";

export type * from "./types.js";

/**
 * Codes of failures the client itself detects: the binary could not be
 * started, a command was sent before start(), the process ended before
 * answering (the message then ends with the last lines of zot's stderr,
 * which say why), the client was closed, or a prompt's signal was aborted
 * before it was sent.
 */
export type ClientErrorCode =
  | "spawn_failed"
  | "not_started"
  | "process_exited"
  | "closed"
  | "aborted";

/** Options of one prompt or compaction. */
export interface WorkOptions {
  /**
   * Aborting it cancels this work alone: `abort` is sent with its
   * `prompt_id`, which aborts it when it runs and drops it when it waits in
   * the queue; the stream ends with `turn_end` (stop `aborted`) and `done`.
   * Already aborted: nothing is sent and the stream fails with code
   * `aborted`.
   */
  signal?: AbortSignal;
}

/** Options of one prompt: WorkOptions, and the shape of its answer. */
export interface PromptOptions extends WorkOptions {
  /**
   * A JSON Schema the final answer must follow; the parsed answer is the
   * record's `structured` (PromptStream.result). An answer that never
   * follows it ends the prompt with code `invalid_output`.
   */
  outputSchema?: Record<string, unknown>;
  /** Corrective turns an answer that does not follow it gets (default 2). */
  outputRetries?: number;
  /** The model of this prompt only (of the session's provider). */
  model?: string;
  /** The reasoning level of this prompt only. */
  reasoning?: string;
  /** The step limit of this prompt only. */
  maxSteps?: number;
  /** The output limit of each model call of this prompt. */
  maxTokens?: number;
  /** The cost budget of this prompt in US dollars; spent, the prompt ends with stop `max_cost`. */
  maxCostUsd?: number;
}

/** Something text can be written to, such as `process.stderr`. */
export interface TextSink {
  write(text: string): unknown;
}

/** How to start `zot rpc`. */
export interface ZotClientOptions {
  /** The zot binary; default `$ZOT_BIN`, else `zot` looked up in PATH. */
  bin?: string;
  /** Flags after `rpc`, e.g. `["--provider", "scripted"]`. */
  args?: string[];
  /**
   * Variables set on top of the current environment; `undefined` removes
   * one (e.g. `{ZOTCORE_RPC_TOKEN: undefined}`).
   */
  env?: Record<string, string | undefined>;
  /** The process's working directory; default the current one. */
  cwd?: string;
  /**
   * Where zot's stderr (its log, never protocol frames) goes: this
   * process's stderr (default), nowhere, a sink, or a function. The client
   * reads it either way and keeps its last lines for exit errors.
   */
  stderr?: "inherit" | "ignore" | TextSink | ((text: string) => void);
  /** How long close() waits for zot to exit before signalling it; default 5000. */
  closeTimeoutMs?: number;
  /**
   * Answers each `permission_request` event (zot asks them only when
   * started with `--approve`): called with the event, off the line handler;
   * what it returns (or resolves to) is sent as `answer_permission`. A
   * throw or a rejection rejects the call. The event still reaches its
   * stream. Without it, answer with `answerPermission`.
   */
  onPermissionRequest?: (
    event: PermissionRequestEvent,
  ) => PermissionAnswer | Promise<PermissionAnswer>;
}

/**
 * An answer to a permission request: a decision, or a decision with the
 * reason shown to the model when it rejects.
 */
export type PermissionAnswer = PermissionDecision | { decision: PermissionDecision; reason?: string };

/** What `hello` says about the client besides its token. */
export interface HelloOptions {
  /** The protocol version the client speaks; the server answers with its own. */
  protocolVersion?: number;
  /** Who the client is, free-form, e.g. `{name: "my-editor", version: "2.1.0"}`. */
  client?: Record<string, unknown>;
  /** Ask for the events of sub-agents (the task tool) as `child_event` (docs/agents.md). */
  childEvents?: boolean;
}

/** A failed command, a failed start, or a process that went away. */
export declare class ZotError extends Error {
  constructor(message: string, details: { code: ErrorCode | ClientErrorCode; command?: string; response?: Response });
  /** The server's stable error code, or one of the client's own. */
  readonly code: ErrorCode | ClientErrorCode;
  /** The command that failed, when there was one. */
  readonly command?: string;
  /** The failed response as the server sent it, when there was one. */
  readonly response?: Response;
  /** The record of the prompt that failed (PromptStream.result), when it had one. */
  readonly result?: PromptResult;
}

/**
 * The events of one prompt or compaction, in order, ending with `done`.
 * Events the client does not know (a newer server's) are passed through
 * as they came, with all their fields; so are unknown fields of known
 * events. Events are buffered without bound until read.
 */
export declare class PromptStream implements AsyncIterableIterator<Event> {
  /** The command that started the work. */
  readonly command: "prompt" | "compact";
  /** The command's id; every event of the work carries it as `prompt_id`. */
  readonly id: number;
  /**
   * The command's answer: `{started: true}`, or `{started: false, queued:
   * true, position}` when other work runs. Rejects with a ZotError when the
   * command failed (iterating then throws the same error).
   */
  readonly start: Promise<StartResult>;
  /** The start result once the answer came. */
  readonly startResult: StartResult | undefined;
  next(): Promise<IteratorResult<Event, undefined>>;
  /** Stops reading; the work goes on (abort it with ZotClient.abort). */
  return(): Promise<IteratorResult<Event, undefined>>;
  [Symbol.asyncIterator](): PromptStream;
  /** Reads every remaining event, `done` included. */
  collect(): Promise<Event[]>;
  /**
   * Reads every remaining event and resolves to the prompt's record from
   * its `done` (undefined for a compaction); rejects with a ZotError
   * carrying the record as `result` when an `error` event came.
   */
  result(): Promise<PromptResult | undefined>;
}

/**
 * A `zot rpc` subprocess and the commands it answers. While no command
 * waits for its answer and no work runs, the process does not keep Node
 * running: a script that ends without close() exits, and zot with it.
 */
export declare class ZotClient {
  constructor(options?: ZotClientOptions);
  /** Spawns `bin rpc ...args`; rejects with code `spawn_failed`. */
  start(): Promise<void>;
  /**
   * Introduces the client and authenticates it (required first when the
   * server has ZOTCORE_RPC_TOKEN).
   */
  hello(token?: string, options?: HelloOptions): Promise<HelloResult>;
  /**
   * Answers a `permission_request`; fails with `unknown_request` when it no
   * longer waits (answered, timed out or aborted). With `allow_always`,
   * `options.save` also keeps the request's `rule` (or `options.rule`) in
   * zot's config.json for later sessions; `settings_error` when it cannot.
   */
  answerPermission(
    requestId: string,
    decision: PermissionDecision,
    reason?: string,
    options?: { save?: "project" | "everywhere"; rule?: string },
  ): Promise<void>;
  /** Sends a prompt; iterate the stream for its events. */
  prompt(message: string, images?: ImageInput[] | null, options?: PromptOptions): PromptStream;
  /** Sends a prompt and resolves to its record once it ends (PromptStream.result). */
  run(message: string, options?: PromptOptions & { images?: ImageInput[] }): Promise<PromptResult | undefined>;
  /**
   * Cancels the running work; with `all`, drops queued work too. With
   * `promptId` (a stream's `id`), cancels only that command's work: aborted
   * when it runs, dropped when it waits, left alone when it has ended; not
   * with `all` (`invalid_params`).
   */
  abort(options?: { all?: boolean; promptId?: string | number }): Promise<AbortResult>;
  /** Compacts the transcript; same lifecycle as prompt. */
  compact(instructions?: string, options?: WorkOptions): PromptStream;
  /** Adds a message to the running prompt at its next step boundary: null when it took it, else (no prompt runs) the stream of the prompt it became; fails with `limit_exceeded` past the bounds. */
  steer(message: string): Promise<PromptStream | null>;
  /** Queues a prompt for after the running work; same lifecycle as prompt(). */
  followUp(message: string): PromptStream;
  /** Adds system context to the next model call; resolves to how many contexts wait; fails with `limit_exceeded` past the bounds. */
  injectContext(text: string, source?: string): Promise<number>;
  /** Queues an event from outside as a prompt of its own, marked with its source. */
  externalEvent(payload: unknown, source?: string): PromptStream;
  /** A snapshot of the runtime. */
  getState(): Promise<StateResult>;
  /** The session's prompt defaults. */
  getConfig(): Promise<SessionDefaults>;
  /** Replaces the session's prompt defaults whole; fails with `invalid_params`, `unknown_model` or `busy`. */
  setConfig(config: SessionDefaults): Promise<SessionDefaults>;
  /** Merges an RFC 7396 patch into the session's prompt defaults (null: zot's default). */
  patchConfig(patch: Record<string, unknown>): Promise<SessionDefaults>;
  /** What this zot and this session support: providers, doors, features, limits. */
  getCapabilities(): Promise<CapabilitiesResult>;
  /** The whole transcript. */
  getMessages(): Promise<MessagesResult>;
  /** Drops the transcript; fails with `busy` while work runs or waits. */
  clear(): Promise<void>;
  /** Switches model within the provider; fails with `unknown_model`. */
  setModel(model: string): Promise<SetModelResult>;
  /** Switches the permission mode; fails with `invalid_params` for a mode not offered. */
  setMode(mode: PermissionMode): Promise<SetModeResult>;
  /** Changes the sandbox of the tools (as /jail and /unjail); an absent member is left as it is; fails with `invalid_params` for a mode that is not one. */
  setSandbox(sandbox?: { mode?: SandboxMode; network?: boolean }): Promise<SandboxState>;
  /** The session's skills: offered, shadowed, and those that could not be read (docs/skills.md). */
  listSkills(): Promise<ListSkillsResult>;
  listAgents(): Promise<ListAgentsResult>;
  /** A skill's instructions, or a file or folder inside its folder; fails with `not_found`, or `invalid_params` for a path out of the skill's folder. */
  getSkill(name: string, file?: string): Promise<GetSkillResult>;
  /** Undoes the last turn, or turn `turn` (from 1) and every turn after it: its files and messages; fails with `changed_outside`, `not_found` or `busy`. */
  undo(turn?: number): Promise<UndoResult>;
  /** The provider's models. */
  getModels(): Promise<ModelsResult>;
  /** Health check. */
  ping(): Promise<PingResult>;
  /** The slash commands: zot's own, then the running extensions'. */
  getCommands(): Promise<CommandsResult>;
  /** The extensions zot found, in load order, with their state. */
  getExtensions(): Promise<ExtensionsResult>;
  /**
   * Runs an extension's slash command; for action "prompt", `stream` is the
   * prompt zot submitted, else null (the text or panel is in `result`).
   */
  runCommand(name: string, args?: string): Promise<{ result: RunCommandResult; stream: PromptStream | null }>;
  /** Sends a key to an open extension panel; `not_found` when none is open. */
  panelKey(panelId: string, key: PanelKey, text?: string): Promise<void>;
  /** Closes an open extension panel, as a user would. */
  closePanel(panelId: string): Promise<void>;
  /** Stops the extensions, finds them again and starts them; `busy` while work runs. */
  reloadExtensions(): Promise<ExtensionsResult>;
  /** The session's MCP servers, sorted by name, with their status and tools. */
  mcpList(): Promise<MCPServersResult>;
  /** Adds MCP servers (never `busy`); `invalid_params` for an unusable one. */
  mcpAdd(servers: MCPServer[]): Promise<MCPServersResult>;
  /** Removes an MCP server; `not_found` when there is none of that name. */
  mcpRemove(name: string): Promise<MCPServersResult>;
  /** Registers functions as tools the model can call; `name_taken`, `invalid_params`. Resolves to the names registered. */
  registerTools(tools: ClientToolFunction[]): Promise<string[]>;
  /** One tool in one line: `zot.tool("weather", {description, schema}, ({city}) => "fog in " + city)`. */
  tool(name: string, options: Omit<ClientToolFunction, "name" | "run">, run: ClientToolFunction["run"]): Promise<string[]>;
  /** Removes registered tools by name (none: all); `not_found` for one not registered. Resolves to the names left. */
  unregisterTools(names?: string[]): Promise<string[]>;
  /** The stored sessions, newest first; `cwd` keeps those of one folder. */
  listSessions(cwd?: string): Promise<SessionInfo[]>;
  /** Makes a stored session this process's; `busy`, `not_found`, `session_locked`. */
  loadSession(sessionId: string): Promise<SessionInfo>;
  /** Forks a stored session before a user prompt, loading the fork unless `load` is false. */
  forkSession(options?: { sessionId?: string; atIndex?: number; atMessageId?: string; load?: boolean }): Promise<ForkSessionResult>;
  /**
   * Sends any command by its type and fields; resolves to the response's
   * `data`. For commands of a newer server.
   */
  request(type: string, fields?: Record<string, unknown>): Promise<unknown>;
  /**
   * Closes zot's stdin (zot finishes its work and exits), waits up to
   * closeTimeoutMs, then sends SIGTERM and, after a grace period, SIGKILL.
   */
  close(): Promise<{ code: number | null; signal: string | null }>;

  /** Every event line, also those of streams nobody reads. */
  on(name: "event", listener: (event: Event) => void): this;
  /** A stdout line that is not a JSON object: a server bug. */
  on(name: "protocolError", listener: (line: string, error: Error) => void): this;
  /** The process ended. */
  on(name: "exit", listener: (code: number | null, signal: string | null) => void): this;
  once(name: "event", listener: (event: Event) => void): this;
  once(name: "protocolError", listener: (line: string, error: Error) => void): this;
  once(name: "exit", listener: (code: number | null, signal: string | null) => void): this;
  off(name: "event", listener: (event: Event) => void): this;
  off(name: "protocolError", listener: (line: string, error: Error) => void): this;
  off(name: "exit", listener: (code: number | null, signal: string | null) => void): this;
}

/** A function as a tool the model can call (registerTools). */
export interface ClientToolFunction {
  name: string;
  description?: string;
  /** JSON Schema of the arguments; absent: any object. */
  schema?: object;
  /** It changes nothing: never put through approval. */
  readOnly?: boolean;
  /** How long zot waits for a result; default 60 000. */
  timeoutMs?: number;
  /** Runs a call: a string, or text, images and is_error; a throw is a failed call. `signal` aborts when zot ends the call first. */
  run(args: ClientToolCallEvent["args"], ctx: { signal: AbortSignal }): unknown;
}
