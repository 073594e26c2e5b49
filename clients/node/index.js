// zot's Node reference client: drives a `zot rpc` subprocess over its
// stdin and stdout, one JSON object per LF-terminated line each way.
// No runtime dependencies; the types are in index.d.ts and types.d.ts.

import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";

import { LineSplitter } from "./lines.js";

/** How long close() waits for zot to exit after ending its stdin. */
const DEFAULT_CLOSE_TIMEOUT_MS = 5000;
/** How long close() waits after SIGTERM before SIGKILL, and how long stdout may outlive the process. */
const TERM_GRACE_MS = 2000;
/** How much of zot's stderr the client keeps to say why it exited. */
const STDERR_TAIL_CHARS = 4096;

/**
 * A failed command, a failed start, or a process that went away.
 * `code` is the server's stable error code (see types.d.ts ErrorCode) or one
 * of the client's own: `spawn_failed`, `not_started`, `process_exited`,
 * `closed`, `aborted`. A `process_exited` error's message ends with the last
 * lines zot wrote to stderr, where it says why it refused to start.
 */
export class ZotError extends Error {
  /**
   * @param {string} message
   * @param {{code: string, command?: string, response?: object}} details
   */
  constructor(message, { code, command, response }) {
    super(message);
    this.name = "ZotError";
    /** @type {string} */
    this.code = code;
    /** @type {string | undefined} */
    this.command = command;
    /** @type {object | undefined} */
    this.response = response;
  }
}

/**
 * The events of one prompt or compaction, in order, ending with `done`.
 * Iterate it with `for await`; `start` resolves to the command's StartResult
 * (or rejects with a ZotError when the command failed).
 *
 * Events are buffered without bound until read, so a stream that is never
 * read never blocks the client (or its other commands, such as abort).
 */
export class PromptStream {
  /**
   * @param {string} command "prompt" or "compact"
   * @param {number} id the command's id, which every event of it carries as prompt_id
   */
  constructor(command, id) {
    /** The command that started the work: "prompt" or "compact". */
    this.command = command;
    /** The command's id; its events carry it as `prompt_id`. */
    this.id = id;
    /** The start result once the response came, else undefined. */
    this.startResult = undefined;
    /** @type {object[]} */
    this._queue = [];
    /** @type {((r: IteratorResult<object>) => void) | null} */
    this._wake = null;
    /** @type {ZotError | null} */
    this._failure = null;
    this._finished = false; // done received or failure
    this._detached = false; // the reader stopped iterating
    /** Called once when the stream gets its done or fails. */
    this._onSettle = () => {};
    /** @type {(v: object) => void} */
    let resolve = () => {};
    /** @type {(e: Error) => void} */
    let reject = () => {};
    /** Resolves to the StartResult; rejects with a ZotError when the command failed. */
    this.start = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Callers who only iterate learn of a failure from the iterator; do
    // not let the unobserved promise become an unhandled rejection.
    this.start.catch(() => {});
    this._resolveStart = resolve;
    this._rejectStart = reject;
  }

  /** @param {object} result */
  _started(result) {
    this.startResult = result;
    this._resolveStart(result);
  }

  /** @param {object} ev */
  _push(ev) {
    if (this._finished) return;
    if (/** @type {{type?: unknown}} */ (ev).type === "done") {
      this._finished = true;
      this._onSettle();
    }
    if (this._detached) return;
    if (this._wake) {
      const wake = this._wake;
      this._wake = null;
      wake({ value: ev, done: false });
      return;
    }
    this._queue.push(ev);
  }

  /** @param {ZotError} err */
  _fail(err) {
    if (this._finished) return;
    this._finished = true;
    this._onSettle();
    this._failure = err;
    this._rejectStart(err);
    if (this._wake) {
      const wake = this._wake;
      this._wake = null;
      wake(Promise.reject(err));
    }
  }

  /** @returns {Promise<IteratorResult<object>>} */
  next() {
    if (this._queue.length > 0) {
      const value = /** @type {object} */ (this._queue.shift());
      return Promise.resolve({ value, done: false });
    }
    if (this._failure && !this._detached) {
      const err = this._failure;
      this._detached = true; // report it once
      return Promise.reject(err);
    }
    if (this._finished || this._detached) {
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this._wake = resolve;
    });
  }

  /**
   * Stops reading: buffered and later events of this work are dropped. The
   * work itself goes on; call the client's abort() to stop it.
   * @returns {Promise<IteratorResult<object>>}
   */
  return() {
    this._detached = true;
    this._queue = [];
    if (this._wake) {
      const wake = this._wake;
      this._wake = null;
      wake({ value: undefined, done: true });
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /**
   * Reads every remaining event, `done` included.
   * @returns {Promise<object[]>}
   */
  async collect() {
    const events = [];
    for await (const ev of this) events.push(ev);
    return events;
  }

  /**
   * Reads every remaining event and resolves to the prompt's record from
   * its `done`: stop, final text, turns, tool calls, duration, usage and
   * cost of this prompt, and `structured` (the answer parsed as JSON) when
   * the prompt gave an output schema; undefined for a compaction. Rejects
   * with a ZotError (the `error` event's code, e.g. `invalid_output`, and
   * the record as its `result`) when the work failed.
   * @returns {Promise<object | undefined>}
   */
  async result() {
    let failure;
    let record;
    for await (const ev of this) {
      if (ev.type === "error") failure = ev;
      if (ev.type === "done") record = ev.result;
    }
    if (failure) {
      const err = new ZotError(failure.message, { code: failure.code ?? "", command: this.command });
      err.result = record;
      throw err;
    }
    return record;
  }
}

/**
 * A `zot rpc` subprocess and the commands it answers.
 *
 * Emits "event" for every event line (also those of streams nobody reads),
 * "protocolError" (line, error) for a stdout line that is not a JSON object
 * (a server bug), and "exit" (code, signal) when the process ends.
 */
export class ZotClient extends EventEmitter {
  /**
   * @param {{bin?: string, args?: string[], env?: Record<string, string | undefined>,
   *          cwd?: string, stderr?: "inherit" | "ignore" | {write(text: string): unknown} | ((text: string) => void),
   *          closeTimeoutMs?: number,
   *          onPermissionRequest?: (event: any) => unknown}} [options]
   */
  constructor(options = {}) {
    super();
    // The binary: options.bin, else $ZOT_BIN, else zot on PATH, as the
    // Python and Go clients find it.
    this._bin = options.bin || process.env.ZOT_BIN || "zot";
    this._binFromPath = !options.bin && !process.env.ZOT_BIN;
    this._args = options.args ?? [];
    this._env = options.env;
    this._cwd = options.cwd;
    this._stderr = options.stderr ?? "inherit";
    this._closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    /** @type {import("node:child_process").ChildProcess | null} */
    this._proc = null;
    this._nextId = 1;
    /** @type {Map<number, {command: string, resolve: (r: any) => void, reject: (e: Error) => void}>} */
    this._pending = new Map();
    /** @type {Map<number, PromptStream>} */
    this._streams = new Map();
    /** @type {ZotError | null} set once no command can be answered any more */
    this._gone = null;
    /** @type {Promise<{code: number | null, signal: string | null}> | null} */
    this._exited = null;
    /** @type {Promise<void> | null} */
    this._closing = null;
    /** The end of zot's stderr. */
    this._stderrTail = "";
    /** Whether the process and its pipes keep Node's event loop alive. */
    this._held = true;
    /** Answers permission_request events, when given. */
    this._onPermissionRequest = options.onPermissionRequest;
    /** The functions registered as tools, by name (registerTools). */
    this._tools = new Map();
    /** The calls of them under way: call id → AbortController. */
    this._toolCalls = new Map();
  }

  /**
   * Spawns `bin rpc ...args`. Resolves once the process runs; rejects with a
   * ZotError (code `spawn_failed`) when it cannot be started.
   * @returns {Promise<void>}
   */
  start() {
    if (this._proc) return Promise.reject(new ZotError("zot client: already started", { code: "spawn_failed" }));
    const env = { ...process.env };
    for (const [k, v] of Object.entries(this._env ?? {})) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    // stderr is always piped: the client passes it on and keeps its end.
    const proc = spawn(this._bin, ["rpc", ...this._args], {
      cwd: this._cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this._proc = proc;
    this._wireStderr(proc);
    this._hold();

    // A write after the process died reports EPIPE here; the exit handler
    // fails whatever was waiting.
    proc.stdin?.on("error", () => {});
    const splitter = new LineSplitter((line) => this._onLine(line));
    proc.stdout?.on("data", (chunk) => splitter.push(chunk));
    proc.stdout?.on("end", () => splitter.end());

    this._exited = new Promise((resolve) => {
      proc.on("exit", (code, signal) => resolve({ code, signal }));
      proc.on("error", () => resolve({ code: null, signal: null }));
    });
    const exitedError = (/** @type {number | null} */ code, /** @type {string | null} */ signal) => {
      const why = stderrReason(this._stderrTail);
      return new ZotError(`zot exited (code ${code}, signal ${signal})${why ? `: ${why}` : ""}`, { code: "process_exited" });
    };
    proc.on("close", (code, signal) => {
      this._goneWith(exitedError(code, signal));
      this.emit("exit", code, signal);
    });
    // "close" waits for stdout to end; should a leftover grandchild hold it
    // open, fail what is waiting anyway, shortly after the exit.
    proc.on("exit", (code, signal) => {
      setTimeout(() => this._goneWith(exitedError(code, signal)), TERM_GRACE_MS).unref();
    });

    return new Promise((resolve, reject) => {
      proc.once("spawn", () => resolve());
      proc.once("error", (err) => {
        const notFound = this._binFromPath && /** @type {{code?: string}} */ (err).code === "ENOENT";
        const e = new ZotError(
          notFound ? "zot not found: pass bin, set ZOT_BIN, or put zot on PATH" : `starting ${this._bin}: ${err.message}`,
          { code: "spawn_failed" },
        );
        this._goneWith(e);
        reject(e);
      });
    });
  }

  /** @param {import("node:child_process").ChildProcess} proc */
  _wireStderr(proc) {
    const dest = this._stderr;
    if (!proc.stderr) return;
    proc.stderr.setEncoding("utf8");
    /** @type {(text: string) => void} */
    let pass = () => {};
    if (dest === "inherit") pass = (text) => process.stderr.write(text);
    else if (typeof dest === "function") pass = dest;
    else if (typeof dest === "object") pass = (text) => dest.write(text);
    proc.stderr.on("data", (/** @type {string} */ text) => {
      this._stderrTail = (this._stderrTail + text).slice(-STDERR_TAIL_CHARS);
      pass(text);
    });
  }

  /**
   * Lets Node exit while no command waits for its answer and no work runs:
   * the process and its pipes keep the event loop alive only then, so a
   * script that never calls close() still ends (zot then reads the end of
   * its stdin and exits).
   */
  _hold() {
    const proc = this._proc;
    const busy = this._pending.size > 0 || this._streams.size > 0;
    if (!proc || busy === this._held) return;
    this._held = busy;
    for (const h of [proc, proc.stdin, proc.stdout, proc.stderr]) {
      const handle = /** @type {{ref?: () => void, unref?: () => void} | null} */ (h);
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /**
   * Fails every waiting command and open stream; no later command is sent.
   * @param {ZotError} err
   */
  _goneWith(err) {
    if (!this._gone) this._gone = err;
    for (const [id, p] of this._pending) {
      this._pending.delete(id);
      p.reject(new ZotError(`${p.command}: ${err.message}`, { code: err.code, command: p.command }));
    }
    for (const [id, s] of this._streams) {
      this._streams.delete(id);
      s._fail(new ZotError(`${s.command}: ${err.message} before done`, { code: err.code, command: s.command }));
    }
    this._hold();
  }

  /** @param {string} line */
  _onLine(line) {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line === "") return;
    let frame;
    try {
      frame = JSON.parse(line);
    } catch (err) {
      this.emit("protocolError", line, err);
      return;
    }
    if (frame === null || typeof frame !== "object" || Array.isArray(frame) || typeof frame.type !== "string") {
      this.emit("protocolError", line, new Error("not a JSON object with a string type"));
      return;
    }
    if (frame.type === "response") {
      this._onResponse(frame);
      return;
    }
    this.emit("event", frame);
    if (frame.type === "permission_request" && this._onPermissionRequest) this._answerRequest(frame);
    if (frame.type === "client_tool_call" && this._tools.has(frame.tool)) this._runTool(frame);
    if (frame.type === "tool_result") this._toolCalls.get(frame.id)?.abort();
    const stream = this._streams.get(frame.prompt_id);
    if (!stream) return;
    if (frame.type === "done") this._streams.delete(frame.prompt_id);
    stream._push(frame);
    this._hold();
  }

  /** @param {any} resp */
  _onResponse(resp) {
    const p = this._pending.get(resp.id);
    if (!p) return;
    this._pending.delete(resp.id);
    this._hold();
    if (resp.success) {
      p.resolve(resp.data);
      return;
    }
    p.reject(
      new ZotError(`${resp.command || p.command}: ${resp.error ?? "failed"}`, {
        code: resp.code ?? "internal",
        command: resp.command || p.command,
        response: resp,
      }),
    );
  }

  /**
   * Sends one command and resolves to its response's data.
   * @param {string} type
   * @param {Record<string, unknown>} [fields]
   * @returns {Promise<any>}
   */
  request(type, fields = {}) {
    return this._send(type, fields).promise;
  }

  /**
   * @param {string} type
   * @param {Record<string, unknown>} fields
   * @returns {{id: number, promise: Promise<any>}}
   */
  _send(type, fields) {
    const id = this._nextId++;
    if (!this._proc) {
      return { id, promise: Promise.reject(new ZotError(`${type}: start() was not called`, { code: "not_started", command: type })) };
    }
    if (this._gone) {
      return { id, promise: Promise.reject(new ZotError(`${type}: ${this._gone.message}`, { code: this._gone.code, command: type })) };
    }
    const promise = new Promise((resolve, reject) => {
      this._pending.set(id, { command: type, resolve, reject });
    });
    this._hold();
    const line = JSON.stringify({ id, type, ...fields }) + "\n";
    this._proc.stdin?.write(line);
    return { id, promise };
  }

  /**
   * Introduces the client; with ZOTCORE_RPC_TOKEN set on the server it must
   * come first and carry that token (a wrong one ends the process). The
   * protocol version the caller speaks and who it is are sent when given;
   * the result's protocol_version is the server's.
   * @param {string} [token]
   * With `options.childEvents` the events of sub-agents (the task tool)
   * arrive too, as child_event on the prompt's stream (docs/agents.md).
   * @param {{protocolVersion?: number, client?: Record<string, unknown>, childEvents?: boolean}} [options]
   */
  hello(token, options = {}) {
    /** @type {Record<string, unknown>} */
    const fields = {};
    if (token !== undefined) fields.token = token;
    if (options.protocolVersion !== undefined) fields.protocol_version = options.protocolVersion;
    if (options.client !== undefined) fields.client = options.client;
    if (options.childEvents !== undefined) fields.child_events = options.childEvents;
    return this.request("hello", fields);
  }

  /**
   * Answers a permission_request event: "allow_once" runs the tool call,
   * "allow_always" runs it and every later call of that tool without
   * asking, "reject" refuses it (the reason is shown to the model). With
   * "allow_always", `options.save` ("project" or "everywhere") also keeps
   * the request's rule (or `options.rule`) in zot's config.json for later
   * sessions (docs/settings.md); that fails with `settings_error` when it
   * cannot be saved, and the request still waits. Fails with
   * `unknown_request` when the request no longer waits.
   * @param {string} requestId
   * @param {"allow_once" | "allow_always" | "reject"} decision
   * @param {string} [reason]
   * @param {{save?: "project" | "everywhere", rule?: string}} [options]
   */
  async answerPermission(requestId, decision, reason, options = {}) {
    /** @type {Record<string, unknown>} */
    const fields = { request_id: requestId, decision };
    if (reason !== undefined) fields.reason = reason;
    if (options.save !== undefined) fields.save = options.save;
    if (options.rule !== undefined) fields.rule = options.rule;
    await this.request("answer_permission", fields);
  }

  /**
   * Asks onPermissionRequest about a request, off the line handler, and
   * sends its answer; a failing callback rejects the call. A request that
   * no longer waits (timed out, aborted) or a process that is gone makes
   * the answer fail, which is nobody's fault here.
   * @param {any} ev
   */
  _answerRequest(ev) {
    const ask = this._onPermissionRequest;
    Promise.resolve()
      .then(() => ask(ev))
      .then(
        (ans) => (typeof ans === "string" ? { decision: ans } : ans ?? { decision: "reject", reason: "the client gave no decision" }),
        (err) => ({ decision: "reject", reason: `the client failed to decide: ${err instanceof Error ? err.message : String(err)}` }),
      )
      .then((ans) => this.answerPermission(ev.request_id, ans.decision, ans.reason))
      .catch(() => {});
  }

  /**
   * Sends a prompt. The returned stream is iterated for its events; `start`
   * resolves to the StartResult ({started:true} or {started:false, queued:true, position}).
   *
   * With `options.signal`, aborting the signal cancels this work alone: the
   * client sends `abort` with its `prompt_id`, which aborts it when it runs
   * and drops it when it waits in the queue (it never runs), and the stream
   * ends as every aborted work does, with `turn_end` (stop `aborted`) and
   * `done`; other work is never cut. A signal already aborted sends
   * nothing: the stream fails with code `aborted`.
   * @param {string} message
   * @param {{mime_type?: string, data: string}[]} [images] base64 images
   * With `options.outputSchema` (a JSON Schema) the final answer must
   * follow it (parsed on the record's `structured`, see
   * PromptStream.result), with up to `options.outputRetries` corrective
   * turns. `model`, `reasoning`, `maxSteps`, `maxTokens` and `maxCostUsd`
   * change this prompt only.
   * @param {{signal?: AbortSignal, outputSchema?: object, outputRetries?: number, model?: string, reasoning?: string, maxSteps?: number, maxTokens?: number, maxCostUsd?: number}} [options]
   */
  prompt(message, images, options = {}) {
    const fields = images === undefined || images === null ? { message } : { message, images };
    if (options.outputSchema !== undefined) fields.output_schema = options.outputSchema;
    if (options.outputRetries !== undefined) fields.output_retries = options.outputRetries;
    if (options.model !== undefined) fields.model = options.model;
    if (options.reasoning !== undefined) fields.reasoning = options.reasoning;
    if (options.maxSteps !== undefined) fields.max_steps = options.maxSteps;
    if (options.maxTokens !== undefined) fields.max_tokens = options.maxTokens;
    if (options.maxCostUsd !== undefined) fields.max_cost_usd = options.maxCostUsd;
    return this._work("prompt", fields, options.signal);
  }

  /**
   * Sends a prompt and resolves to its record once it ends (see
   * PromptStream.result). options are prompt()'s, with `images`.
   * @param {string} message
   * @param {{images?: {mime_type?: string, data: string}[], signal?: AbortSignal, outputSchema?: object, outputRetries?: number}} [options]
   */
  run(message, options = {}) {
    return this.prompt(message, options.images, options).result();
  }

  /**
   * Adds message to the running prompt at its next step boundary. Resolves
   * to null when the running prompt took it (its `user_message`, `kind`
   * `steer`, comes on that prompt's stream); when no prompt runs it becomes
   * a prompt of its own and resolves to its stream. Rejects with
   * `limit_exceeded` past the bounds (64 KiB, 16 waiting).
   * @param {string} message
   */
  async steer(message) {
    const stream = this._work("steer", { message });
    const res = /** @type {{steered?: boolean}} */ (await stream.start);
    if (!res.steered) return stream;
    this._streams.delete(stream.id);
    stream._finished = true;
    this._hold();
    return null;
  }

  /**
   * Queues a prompt for after the running work (as prompt() does when
   * busy); same lifecycle as prompt().
   * @param {string} message
   */
  followUp(message) {
    return this._work("follow_up", { message });
  }

  /**
   * Adds system context to the next model call (of the running prompt, or
   * the next one), marked as coming from `source`; resolves to how many
   * contexts wait. Rejects with `limit_exceeded` past the bounds.
   * @param {string} text
   * @param {string} [source]
   */
  async injectContext(text, source) {
    const res = /** @type {{pending: number}} */ (await this.request("inject_context", source === undefined ? { text } : { text, source }));
    return res.pending;
  }

  /**
   * Queues an event from outside (any JSON value) as a prompt of its own,
   * marked with `source`; same lifecycle as prompt().
   * @param {unknown} payload
   * @param {string} [source]
   */
  externalEvent(payload, source) {
    return this._work("external_event", source === undefined ? { payload } : { payload, source });
  }

  /**
   * Compacts the transcript; same lifecycle as prompt(), `options.signal`
   * included.
   * @param {string} [instructions]
   * @param {{signal?: AbortSignal}} [options]
   */
  compact(instructions, options = {}) {
    return this._work("compact", instructions === undefined ? {} : { instructions }, options.signal);
  }

  /**
   * @param {string} type
   * @param {Record<string, unknown>} fields
   * @param {AbortSignal} [signal]
   */
  _work(type, fields, signal) {
    if (signal?.aborted) {
      const stream = new PromptStream(type, this._nextId++);
      stream._fail(new ZotError(`${type}: aborted before it was sent`, { code: "aborted", command: type }));
      return stream;
    }
    const { id, promise } = this._send(type, fields);
    const stream = new PromptStream(type, id);
    if (this._proc && !this._gone) this._streams.set(id, stream);
    if (signal) {
      const onAbort = () => this._abortStream(stream);
      signal.addEventListener("abort", onAbort, { once: true });
      stream._onSettle = () => signal.removeEventListener("abort", onAbort);
    }
    promise.then(
      (data) => stream._started(data),
      (err) => {
        this._streams.delete(id);
        stream._fail(err);
        this._hold();
      },
    );
    this._hold();
    return stream;
  }

  /**
   * Cancels one work item by its id: aborted when it runs, dropped when it
   * waits in the queue.
   * @param {PromptStream} stream
   */
  _abortStream(stream) {
    if (stream._finished || !this._streams.has(stream.id)) return;
    this.abort({ promptId: stream.id }).catch(() => {});
  }

  /**
   * Cancels the running prompt or compact; with `all`, drops the queue too.
   * With `promptId` (a stream's `id`), cancels only the work of that command:
   * aborted when it runs, dropped when it waits, left alone when it has
   * ended; not with `all` (`invalid_params`).
   * @param {{all?: boolean, promptId?: string | number}} [options]
   */
  abort(options = {}) {
    /** @type {Record<string, unknown>} */
    const fields = {};
    if (options.all) fields.all = true;
    if (options.promptId !== undefined) fields.prompt_id = options.promptId;
    return this.request("abort", fields);
  }

  /** A snapshot of the runtime. */
  getState() {
    return this.request("get_state");
  }

  /** The session's prompt defaults ({model, reasoning, max_steps, max_cost_usd}). */
  async getConfig() {
    return (await this.request("get_config")).config;
  }

  /**
   * Replaces the session's prompt defaults whole (`model` and `max_steps`
   * required); resolves to them. Rejects with `invalid_params`,
   * `unknown_model` or `busy`, setting nothing.
   * @param {object} config
   */
  async setConfig(config) {
    return (await this.request("set_config", { config })).config;
  }

  /**
   * Merges patch into the session's prompt defaults (RFC 7396: null takes
   * one back to zot's); resolves to them.
   * @param {object} patch
   */
  async patchConfig(patch) {
    return (await this.request("patch_config", { patch })).config;
  }

  /** What this zot and this session support: providers, doors, features, limits. */
  getCapabilities() {
    return this.request("get_capabilities");
  }

  /** The whole transcript: resolves to the MessagesResult ({messages}). */
  getMessages() {
    return this.request("get_messages");
  }

  /** Drops the transcript; fails with `busy` while work runs or waits. */
  async clear() {
    await this.request("clear");
  }

  /**
   * Switches model within the provider.
   * @param {string} model
   */
  setModel(model) {
    return this.request("set_model", { model });
  }

  /**
   * Switches the permission mode: "ask", "accept_edits", "auto" or
   * "read_only"; resolves to the SetModeResult ({mode, modes}), rejects
   * with `invalid_params` for a mode the session does not offer.
   * @param {string} mode
   */
  setMode(mode) {
    return this.request("set_mode", { mode });
  }

  /**
   * Changes the sandbox of the tools, as /jail and /unjail do: `mode`
   * ("read-only", "workspace-write", "full", "off") and `network`
   * (whether commands reach it), each left as it is when undefined.
   * Resolves to the SandboxState in force; rejects with `invalid_params`
   * for a mode that is not one.
   * @param {{mode?: string, network?: boolean}} [sandbox]
   */
  setSandbox({ mode, network } = {}) {
    const params = {};
    if (mode !== undefined) params.mode = mode;
    if (network !== undefined) params.network = network;
    return this.request("set_sandbox", params);
  }

  /**
   * Lists the session's skills (docs/skills.md): `skills` offered, by
   * name; `shadowed` by one of the same name found earlier; `problems`
   * (those that could not be read, each a one-line message); `tool`
   * (whether the model may load them). Resolves to a ListSkillsResult.
   */
  listSkills() {
    return this.request("list_skills", {});
  }

  /**
   * Lists the agent profiles the session's task tool offers
   * (docs/agents.md): `agents`, `shadowed`, `problems`, `tool`. Resolves
   * to a ListAgentsResult.
   */
  listAgents() {
    return this.request("list_agents", {});
  }

  /**
   * Reads a skill's instructions, or a file or folder inside its folder
   * (`file`, relative to it), as the skill tool gives them to the model.
   * Resolves to a GetSkillResult; rejects with `not_found` for a skill or
   * file there is not, `invalid_params` for a path that leads out of the
   * skill's folder.
   * @param {string} name
   * @param {string} [file]
   */
  getSkill(name, file) {
    return this.request("get_skill", file === undefined ? { name } : { name, file });
  }

  /**
   * Undoes the last turn, or turn `turn` (from 1) and every turn after
   * it: the files they changed and their messages. Resolves to the
   * UndoResult ({turn, message_count, files}); rejects with
   * `changed_outside` (a file changed outside zot since: nothing was
   * restored), `not_found` or `busy`.
   * @param {number} [turn]
   */
  undo(turn) {
    return this.request("undo", turn === undefined ? {} : { turn });
  }

  /** The provider's models: resolves to the ModelsResult ({models}). */
  getModels() {
    return this.request("get_models");
  }

  /** Health check: resolves to {pong: true}. */
  ping() {
    return this.request("ping");
  }

  /** The slash commands of the running extensions: resolves to {commands}. */
  getCommands() {
    return this.request("get_commands");
  }

  /** The extensions zot found, in load order: resolves to {extensions}. */
  getExtensions() {
    return this.request("get_extensions");
  }

  /**
   * Runs an extension's slash command (name without the slash, args the
   * rest of the line). Resolves to its RunCommandResult and, for action
   * "prompt", the PromptStream of the prompt zot submitted; for the other
   * actions `stream` is null and the text or panel is in the result.
   * Rejects with code `not_found` for a command no extension offers and
   * `extension_error` when the extension fails to answer.
   * @param {string} name
   * @param {string} [args]
   * @returns {Promise<{result: any, stream: PromptStream | null}>}
   */
  async runCommand(name, args = "") {
    const { id, promise } = this._send("run_command", { name, args });
    const stream = new PromptStream("run_command", id);
    if (this._proc && !this._gone) this._streams.set(id, stream);
    let result;
    try {
      result = await promise;
    } catch (err) {
      this._streams.delete(id);
      throw err;
    }
    if (result.action !== "prompt" && result.action !== "compact") {
      this._streams.delete(id);
      return { result, stream: null };
    }
    /** @type {Record<string, unknown>} */
    const start = { started: result.started ?? false };
    if (result.queued !== undefined) start.queued = result.queued;
    if (result.position !== undefined) start.position = result.position;
    stream._started(start);
    return { result, stream };
  }

  /**
   * Sends a key to an open extension panel ("up", "enter", "esc", "rune"
   * with text, ...); rejects with `not_found` when no such panel is open.
   * @param {string} panelId
   * @param {string} key
   * @param {string} [text]
   */
  async panelKey(panelId, key, text) {
    await this.request("panel_key", text === undefined ? { panel_id: panelId, key } : { panel_id: panelId, key, text });
  }

  /**
   * Closes an open extension panel, as a user would.
   * @param {string} panelId
   */
  async closePanel(panelId) {
    await this.request("close_panel", { panel_id: panelId });
  }

  /** Stops the extensions, finds them again and starts them; `busy` while work runs. */
  reloadExtensions() {
    return this.request("reload_extensions");
  }

  /** The session's MCP servers, sorted by name: resolves to {servers}. */
  mcpList() {
    return this.request("mcp_list");
  }

  /**
   * Adds MCP servers ({name, command, args, env, cwd} or {name, url,
   * headers, type}); one with a present name replaces it. Never `busy`:
   * they start in the background. Resolves to {servers}; rejects with
   * `invalid_params` for an unusable server.
   * @param {Array<Record<string, unknown>>} servers
   */
  mcpAdd(servers) {
    return this.request("mcp_add", { servers });
  }

  /**
   * Removes an MCP server; rejects with `not_found` when there is none of
   * that name. Resolves to {servers}.
   * @param {string} name
   */
  mcpRemove(name) {
    return this.request("mcp_remove", { name });
  }

  /**
   * Registers functions as tools the model can call (register_tools): each
   * `{name, description?, schema?, readOnly?, timeoutMs?, run}`. On each
   * client_tool_call, `run(args, {signal})` is called; it returns (or
   * resolves to) a string, or `{text?, images?, is_error?}`; a throw is a
   * failed call with its message. `signal` aborts when the call ends at zot
   * first (its timeout, an abort). Rejects with `name_taken` for a name
   * another tool of the session holds, `invalid_params` for a bad
   * definition; then none is added. Resolves to the names registered now.
   * @param {{name: string, description?: string, schema?: object, readOnly?: boolean, timeoutMs?: number, run: (args: any, ctx: {signal: AbortSignal}) => unknown}[]} tools
   */
  async registerTools(tools) {
    const before = new Map(this._tools);
    for (const t of tools) this._tools.set(t.name, t);
    const wire = tools.map((t) => {
      /** @type {Record<string, unknown>} */
      const w = { name: t.name };
      if (t.description !== undefined) w.description = t.description;
      if (t.schema !== undefined) w.schema = t.schema;
      if (t.readOnly) w.read_only = true;
      if (t.timeoutMs !== undefined) w.timeout_ms = t.timeoutMs;
      return w;
    });
    try {
      const { tools: names } = await this.request("register_tools", { tools: wire });
      return names;
    } catch (err) {
      this._tools = before;
      throw err;
    }
  }

  /**
   * One line for one tool: `await zot.tool("weather", {description, schema}, ({city}) => ...)`.
   * @param {string} name
   * @param {{description?: string, schema?: object, readOnly?: boolean, timeoutMs?: number}} options
   * @param {(args: any, ctx: {signal: AbortSignal}) => unknown} run
   */
  tool(name, options, run) {
    return this.registerTools([{ ...options, name, run }]);
  }

  /**
   * Removes registered tools by name (none: all of them); rejects with
   * `not_found` for a name not registered. Resolves to the names left.
   * @param {string[]} [names]
   */
  async unregisterTools(names) {
    const { tools: left } = await this.request("unregister_tools", names === undefined ? {} : { names });
    for (const n of [...this._tools.keys()]) if (!left.includes(n)) this._tools.delete(n);
    return left;
  }

  /**
   * Runs a call of a registered tool off the line handler and sends its
   * result; a call that no longer waits refuses it, nobody's fault here.
   * @param {any} ev
   */
  _runTool(ev) {
    const t = this._tools.get(ev.tool);
    const ctl = new AbortController();
    this._toolCalls.set(ev.call_id, ctl);
    Promise.resolve()
      .then(() => t.run(ev.args, { signal: ctl.signal }))
      .then(
        (out) => (typeof out === "string" ? { text: out } : out == null ? { text: "" } : out),
        (err) => ({ text: err instanceof Error ? err.message : String(err), is_error: true }),
      )
      .then((out) => {
        this._toolCalls.delete(ev.call_id);
        if (ctl.signal.aborted) return;
        /** @type {Record<string, unknown>} */
        const fields = { call_id: ev.call_id };
        if (out.text !== undefined) fields.text = out.text;
        if (out.images !== undefined) fields.images = out.images;
        if (out.is_error) fields.is_error = true;
        return this.request("client_tool_result", fields);
      })
      .catch(() => {});
  }

  /**
   * The stored sessions of the zot home, newest first; `cwd` keeps those
   * of one working directory. This process's own is marked `current`.
   * zot keeps its transcript in memory until asked (--continue,
   * --session, loadSession, forkSession); listing only reads.
   * @param {string} [cwd]
   */
  async listSessions(cwd) {
    const { sessions } = await this.request("list_sessions", cwd === undefined ? {} : { cwd });
    return sessions;
  }

  /**
   * Makes a stored session this process's: its transcript replaces the one
   * in memory and later messages go to its file. Rejects with `busy`,
   * `not_found` or `session_locked`. Resolves to the session.
   * @param {string} sessionId
   */
  async loadSession(sessionId) {
    const { session } = await this.request("load_session", { session_id: sessionId });
    return session;
  }

  /**
   * Forks a stored session (default: this process's) before one of its
   * user prompts (`atIndex` or `atMessageId`; default: the last), and
   * loads the fork unless `load` is false. Resolves to {session, at_index,
   * message_id, message, loaded}: `message` is the prompt left out, to
   * edit and send again. Rejects with `not_found` for no such session or
   * prompt.
   * @param {{sessionId?: string, atIndex?: number, atMessageId?: string, load?: boolean}} [options]
   */
  forkSession(options = {}) {
    const fields = {};
    if (options.sessionId !== undefined) fields.session_id = options.sessionId;
    if (options.atIndex !== undefined) fields.at_index = options.atIndex;
    if (options.atMessageId !== undefined) fields.at_message_id = options.atMessageId;
    if (options.load !== undefined) fields.load = options.load;
    return this.request("fork_session", fields);
  }

  /**
   * Ends zot: closes its stdin (zot finishes running and queued work, then
   * exits), waits up to closeTimeoutMs, then sends SIGTERM, then SIGKILL.
   * Resolves to the exit code and signal. Safe to call more than once.
   * @returns {Promise<{code: number | null, signal: string | null}>}
   */
  async close() {
    const proc = this._proc;
    if (!proc || !this._exited) return { code: null, signal: null };
    if (!this._gone) this._gone = new ZotError("the client was closed", { code: "closed" });
    const exited = this._exited;
    if (!this._closing) {
      this._closing = (async () => {
        proc.stdin?.end();
        if (await settlesWithin(exited, this._closeTimeoutMs)) return;
        proc.kill("SIGTERM");
        if (await settlesWithin(exited, TERM_GRACE_MS)) return;
        proc.kill("SIGKILL");
        await exited;
      })();
    }
    await this._closing;
    return exited;
  }
}

/**
 * Whether p settles within ms milliseconds.
 * @param {Promise<unknown>} p
 * @param {number} ms
 */
async function settlesWithin(p, ms) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The last few lines of zot's stderr, joined into one line; "" for none.
 * @param {string} tail
 */
function stderrReason(tail) {
  const lines = tail
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (tail.length >= STDERR_TAIL_CHARS) lines.shift(); // possibly cut
  return lines.slice(-5).join(" | ");
}
