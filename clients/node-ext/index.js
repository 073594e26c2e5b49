// zot-ext: write zot extensions in Node. A tool, a slash command, an
// intercept or a panel is a callback; Extension speaks zot's extension
// protocol for them (docs/extensions.md): the hello/hello_ack handshake,
// ready, each request with its id, deadline and an AbortSignal that zot's
// cancel ends, events and panel keys one at a time in order, failures
// answered as errors, shutdown, and stdout kept for frames. No runtime
// dependencies; the frames are typed in types.d.ts, generated from zot's
// JSON Schema (schema/ext).

import { createInterface } from "node:readline";

/** How long zot waits for each kind of answer, in milliseconds (docs/extensions.md). */
export const TOOL_TIMEOUT_MS = 60_000;
export const COMMAND_TIMEOUT_MS = 30_000;
export const INTERCEPT_TIMEOUT_MS = 5_000;

/** Thrown by a tool: the model gets the message as a failed result. */
export class ToolError extends Error {
  constructor(message) {
    super(message);
    this.name = "ToolError";
  }
}

/** Thrown by a command: zot shows the message as the command's error. */
export class CommandError extends Error {
  constructor(message) {
    super(message);
    this.name = "CommandError";
  }
}

/** notify, renderPanel or closePanel was called while the extension was not serving zot. */
export class NotRunningError extends Error {
  constructor() {
    super("zot-ext: the extension is not running");
    this.name = "NotRunningError";
  }
}

// ---- what callbacks return -------------------------------------------------------

/** A text block of a tool's result. */
export const text = (text) => ({ type: "text", text });

/** An image block of a tool's result: bytes (Buffer, Uint8Array) or base64 text. */
export function image(data, mimeType = "image/png") {
  const b64 = typeof data === "string" ? data : Buffer.from(data).toString("base64");
  return { type: "image", mime_type: mimeType, data: b64 };
}

/** A command's answer: submit text as a user message. */
export const prompt = (text) => ({ action: "prompt", prompt: text });
/** A command's answer: put text into the user's input, unsent. */
export const insert = (text) => ({ action: "insert", insert: text });
/** A command's answer: show text as a note, with no model call. */
export const display = (text) => ({ action: "display", display: text });
/** A command's answer: open a panel ({id, title?, lines?, footer?}). */
export const openPanel = (panel) => ({ action: "open_panel", open_panel: panel });
/** A command's answer: nothing to do (also what returning nothing means). */
export const noop = () => ({ action: "noop" });

/** An intercept's verdict: refuse; the model (for a tool call) or the user sees reason. */
export const block = (reason = "") => (reason ? { block: true, reason } : { block: true });
/**
 * An intercept's verdict: go on changed. args: the arguments a tool call
 * runs with instead; text: what clients are shown instead of a message's text.
 */
export function rewrite({ args, text } = {}) {
  const v = {};
  if (args !== undefined) v.modified_args = args;
  if (text !== undefined) v.replace_text = text;
  return v;
}

// ---- the extension -------------------------------------------------------------------

/**
 * One extension: what it offers zot and the callbacks that answer. Declare
 * everything, then `await ext.run()`.
 */
export class Extension {
  /**
   * @param {string} name the manifest's name
   * @param {string} [version]
   * @param {{log?: (line: string) => void}} [options] where log() writes (default stderr)
   */
  constructor(name, version = "", options = {}) {
    this.name = name;
    this.version = version;
    this.host = null;
    this._logLine = options.log ?? ((line) => process.stderr.write(line + "\n"));
    this._commands = new Map();
    this._tools = new Map();
    this._events = new Map();
    this._intercepts = new Map();
    this._panelKey = null;
    this._panelClose = null;
    this._starts = [];
    this._regs = [];
    this._live = false;
    this._started = false;
    this._session = null;
  }

  /**
   * A tool the model can call: fn(args, request) returns (or resolves to) a
   * string, a content block, an array of them or {content, is_error};
   * throwing fails the call. options.readOnly says it changes nothing, so
   * it runs in a session's read-only mode without being asked about.
   */
  tool(name, options, fn) {
    if (typeof options === "function") [fn, options] = [options, {}];
    if (typeof options === "string") options = { description: options };
    const frame = { type: "register_tool", name };
    if (options.description) frame.description = options.description;
    if (options.schema) frame.schema = options.schema;
    if (options.timeoutMs !== undefined) frame.timeout_ms = Math.max(1, Math.round(options.timeoutMs));
    if (options.readOnly) frame.read_only = true;
    this._tools.set(name, { fn, timeout: options.timeoutMs ?? TOOL_TIMEOUT_MS });
    this._register(frame);
    return this;
  }

  /**
   * A slash command: fn(args, request), args being what the user typed after
   * its name, returns prompt(), insert(), display(), openPanel(), a string
   * (displayed) or nothing; throwing shows the error.
   */
  command(name, description, fn) {
    if (typeof description === "function") [fn, description] = [description, ""];
    this._commands.set(name, fn);
    const frame = { type: "register_command", name };
    if (description) frame.description = description;
    this._register(frame);
    return this;
  }

  /** Observes a lifecycle event: fn(event), one at a time, in the order they happened. */
  on(event, fn) {
    const list = this._events.get(event) ?? [];
    list.push(fn);
    this._events.set(event, list);
    this._resubscribe();
    return this;
  }

  /** Judges each tool call before it runs: fn(call) returns nothing (allow), block() or rewrite({args}). Throwing blocks. */
  interceptToolCall(fn) {
    return this._intercept("tool_call", fn);
  }

  /** Judges each model call: fn(step) returns nothing or block(). */
  interceptTurnStart(fn) {
    return this._intercept("turn_start", fn);
  }

  /** Judges each assistant message before clients see it: fn(text) returns nothing, block(), a string or rewrite({text}). */
  interceptAssistantMessage(fn) {
    return this._intercept("assistant_message", fn);
  }

  /** Receives the keys pressed in the extension's panels, one at a time, in order: fn({panel_id, key, text}). */
  onPanelKey(fn) {
    this._panelKey = fn;
    return this;
  }

  /** Is told that the user closed a panel: fn(panelId). */
  onPanelClose(fn) {
    this._panelClose = fn;
    return this;
  }

  /**
   * Runs once zot answered hello, before ready: fn(host), the hello_ack
   * frame. What was declared before run() is announced before it runs,
   * intercepts included; what it registers goes out after it, before
   * ready; zot waits for that ready however long onStart takes, up to
   * the extension's start timeout (the manifest's start_timeout_ms).
   * Throwing ends run().
   */
  onStart(fn) {
    this._starts.push(fn);
    return this;
  }

  /** Pushes a notice for the user (level info, success, warn or error). */
  notify(message, level = "info") {
    return this._push({ type: "notify", level, message });
  }

  /** Redraws an open panel: {id, title?, lines?, footer?}. */
  renderPanel(panel) {
    const f = { type: "panel_render", panel_id: panel.id };
    for (const k of ["title", "lines", "footer"]) if (panel[k] !== undefined) f[k] = panel[k];
    return this._push(f);
  }

  /** Closes a panel the extension opened. */
  closePanel(panelId) {
    return this._push({ type: "panel_close", panel_id: panelId });
  }

  /** Writes a line to the extension's log: stderr, which zot keeps in $ZOT_HOME/logs/ext-<name>.log. */
  log(message) {
    this._logLine(`${new Date().toISOString().replace(/\.\d+Z$/, "Z")} ${message}`);
  }

  /**
   * Serves zot on stdin and stdout; at shutdown or the end of stdin the
   * process exits. While it runs, whatever else writes to process.stdout
   * (console.log included) goes to stderr, so only frames reach zot.
   */
  async run() {
    const out = process.stdout;
    const write = out.write.bind(out);
    out.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
    const sink = { write: (line) => write(line) };
    await this.serve(process.stdin, sink);
    await new Promise((resolve) => (write("") ? resolve() : out.once("drain", resolve)));
    process.exit(0);
  }

  /**
   * Serves zot on any pair of streams (tests use them): input is readable,
   * output has write(string). Resolves after shutdown (answered with
   * shutdown_ack) or at the end of input.
   */
  async serve(input, output) {
    if (this._started) throw new Error("zot-ext: run was already called");
    this._started = true;
    const s = new Session(this, output);
    this._session = s;
    // sends_ready: zot waits for the ready sent after onStart, however
    // long it takes (up to its start timeout).
    const hello = { type: "hello", name: this.name, sends_ready: true };
    if (this.version) hello.version = this.version;
    const caps = this._capabilities();
    if (caps.length) hello.capabilities = caps;
    s.send(hello);
    for (const f of this._regs) s.send(f);
    this._regs = [];
    // The subscriptions made before serve go out now, with hello; what
    // onStart adds goes out after it, before ready.
    s.announced = this._subscribeFrame();
    if (s.announced) s.send(s.announced);
    try {
      await s.loop(input);
    } finally {
      s.close();
      this._session = null;
      this._live = false;
    }
  }

  // ---- internals ---------------------------------------------------------------------

  _register(frame) {
    if (this._live && this._session) this._session.send(frame);
    else this._regs.push(frame);
  }

  _intercept(event, fn) {
    // A second judge of the same event is chained after the first, not
    // put in its place: both guards hold.
    this._intercepts.set(event, [...(this._intercepts.get(event) ?? []), fn]);
    this._resubscribe();
    return this;
  }

  _subscribeFrame() {
    const events = [...this._events.keys()].sort();
    const intercept = ["tool_call", "turn_start", "assistant_message"].filter((e) => this._intercepts.has(e));
    if (!events.length && !intercept.length) return null;
    const f = { type: "subscribe" };
    if (events.length) f.events = events;
    if (intercept.length) f.intercept = intercept;
    return f;
  }

  _resubscribe() {
    if (this._live && this._session) this._session.send(this._subscribeFrame() ?? { type: "subscribe", events: [] });
  }

  _capabilities() {
    const caps = [];
    if (this._commands.size) caps.push("commands");
    if (this._tools.size) caps.push("tools");
    if (this._events.size || this._intercepts.size) caps.push("events");
    if (this._panelKey || this._panelClose) caps.push("panels");
    return caps;
  }

  async _push(frame) {
    const s = this._session;
    if (!s) throw new NotRunningError();
    await s.acked;
    if (s.closed || !s.send(frame)) throw new NotRunningError();
  }
}

/** One run: the writer, the requests in flight, the ordered queue. */
class Session {
  constructor(ext, output) {
    this.ext = ext;
    this.output = output;
    this.closed = false;
    this.announced = null; // the subscribe sent with hello
    this.inflight = new Map();
    this.queue = Promise.resolve();
    this.acked = new Promise((resolve, reject) => {
      this.ack = resolve;
      this.noAck = reject;
    });
    this.acked.catch(() => {});
    this.isAcked = false;
  }

  /**
   * Writes one frame; false once zot is gone. A frame JSON cannot hold (a
   * BigInt, a cycle) throws a TypeError and writes nothing: that is the
   * caller's frame at fault, not the connection.
   */
  send(frame) {
    if (this.closed && frame.type !== "shutdown_ack") return false;
    let line;
    try {
      line = JSON.stringify(frame) + "\n";
    } catch (e) {
      throw new TypeError(`the ${frame.type} frame cannot be sent as JSON: ${e?.message ?? String(e)}`);
    }
    try {
      this.output.write(line);
      return true;
    } catch {
      this.closed = true;
      return false;
    }
  }

  async loop(input) {
    const ext = this.ext;
    const rl = createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const raw of rl) {
        const line = raw.trim();
        if (!line) continue;
        let f;
        try {
          f = JSON.parse(line);
        } catch (e) {
          ext.log(`skipped a line from zot that is not JSON: ${e.message}`);
          continue;
        }
        if (f === null || typeof f !== "object" || Array.isArray(f) || typeof f.type !== "string") {
          ext.log("skipped a frame from zot without a type");
          continue;
        }
        if (f.type === "shutdown") {
          this.cancelAll("shutdown");
          this.send({ type: "shutdown_ack" });
          return;
        }
        if (!this.isAcked) {
          if (f.type === "hello_ack") await this.start(f);
          else ext.log(`skipped a ${f.type} frame that came before hello_ack`);
          continue;
        }
        this.dispatch(f);
      }
    } finally {
      rl.close();
    }
  }

  async start(ack) {
    const ext = this.ext;
    ext.host = ack;
    this.isAcked = true;
    this.ack();
    for (const fn of ext._starts) await fn(ack);
    for (const f of ext._regs) this.send(f);
    ext._regs = [];
    const sub = ext._subscribeFrame();
    if (subscription(sub) !== subscription(this.announced)) this.send(sub ?? { type: "subscribe", events: [] });
    this.send({ type: "ready" });
    ext._live = true;
  }

  dispatch(f) {
    const ext = this.ext;
    switch (f.type) {
      case "tool_call": {
        const tool = ext._tools.get(f.name);
        this.request(f.id, tool?.timeout ?? TOOL_TIMEOUT_MS, (req) => runTool(ext, tool?.fn, f, req), (e) => toolFailure(ext, f, e));
        break;
      }
      case "command_invoked": {
        const fn = ext._commands.get(f.name);
        this.request(f.id, COMMAND_TIMEOUT_MS, (req) => runCommand(ext, fn, f, req), (e) => commandFailure(ext, f, e));
        break;
      }
      case "event_intercept": {
        const fns = ext._intercepts.get(f.event) ?? [];
        this.request(f.id, INTERCEPT_TIMEOUT_MS, (req) => verdict(f, fns, req), (e) => ({
          type: "event_intercept_response",
          id: f.id,
          block: true,
          reason: `extension ${ext.name}: its ${f.event} guard failed: ${errorText(e)}`,
        }));
        break;
      }
      case "cancel":
        this.inflight.get(f.id)?.cancel(f.reason || "cancelled");
        break;
      case "event":
        for (const fn of ext._events.get(f.event) ?? []) this.enqueue(`event ${f.event}`, () => fn(f));
        break;
      case "panel_key":
        if (ext._panelKey) this.enqueue("panel key", () => ext._panelKey({ panel_id: f.panel_id, key: f.key, text: f.text }));
        break;
      case "panel_close":
        if (ext._panelClose) this.enqueue("panel close", () => ext._panelClose(f.panel_id));
        break;
      case "hello_ack":
        ext.log("ignored a second hello_ack");
        break;
      default:
        ext.log(`skipped a frame of unknown type ${JSON.stringify(f.type)}`);
    }
  }

  request(id, timeout, run, fail) {
    const controller = new AbortController();
    const req = {
      id,
      deadline: Date.now() + timeout,
      signal: controller.signal,
      reason: "",
      remaining: () => Math.max(0, req.deadline - Date.now()),
      cancel: (reason) => {
        if (controller.signal.aborted) return;
        req.reason = reason;
        controller.abort(reason);
      },
    };
    this.inflight.get(id)?.cancel("the host reused the request's id");
    this.inflight.set(id, req);
    const failed = (e) => {
      this.ext.log(`request ${id}: ${e instanceof ToolError || e instanceof CommandError ? e.message : (e?.stack ?? String(e))}`);
      return fail(e);
    };
    Promise.resolve()
      .then(() => run(req))
      .catch(failed)
      .then((answer) => {
        if (this.inflight.get(id) === req) this.inflight.delete(id);
        if (req.signal.aborted) return; // zot gave the request up: an answer would be dropped
        try {
          this.send(answer);
        } catch (e) {
          this.send(failed(e)); // an answer JSON cannot hold fails the request
        }
      });
  }

  cancelAll(reason) {
    for (const req of this.inflight.values()) req.cancel(reason);
  }

  enqueue(what, fn) {
    if (this.closed) return;
    this.queue = this.queue.then(async () => {
      if (this.closed) return;
      try {
        await fn();
      } catch (e) {
        this.ext.log(`${what}: ${e?.stack ?? String(e)}`);
      }
    });
  }

  close() {
    this.cancelAll("shutdown");
    this.closed = true;
    if (!this.isAcked) this.noAck(new NotRunningError());
  }
}

// ---- helpers ---------------------------------------------------------------------------

/** What a subscribe frame subscribes to, comparable (null and an empty one alike). */
function subscription(f) {
  return JSON.stringify([f?.events ?? [], f?.intercept ?? []]);
}

function errorText(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

async function runTool(ext, fn, f, req) {
  if (!fn) throw new ToolError(`extension ${ext.name} has no tool ${JSON.stringify(f.name)}`);
  const args = f.args && typeof f.args === "object" && !Array.isArray(f.args) ? f.args : {};
  const out = await fn(args, req);
  const frame = { type: "tool_result", id: f.id };
  let content = out;
  if (out && typeof out === "object" && !Array.isArray(out) && !("type" in out)) {
    const stray = Object.keys(out).filter((k) => k !== "content" && k !== "is_error");
    if (stray.length) {
      throw new TypeError(
        `a tool returned an object with ${stray.map((k) => JSON.stringify(k)).join(", ")}: not text, an image nor {content, is_error} (return JSON.stringify(value) to give the model JSON)`,
      );
    }
    content = out.content;
    if (out.is_error) frame.is_error = true;
  }
  if (content !== undefined && content !== null) frame.content = blocks(content);
  return frame;
}

function blocks(v) {
  const list = Array.isArray(v) ? v : [v];
  return list.map((b) => {
    if (typeof b === "string") return text(b);
    if (b && typeof b === "object" && (b.type === "text" || b.type === "image")) return b;
    throw new TypeError(`a tool returned ${typeof b}, not text or an image`);
  });
}

function toolFailure(ext, f, e) {
  const msg = e instanceof ToolError ? e.message : `extension ${ext.name}: tool ${f.name} failed: ${errorText(e)}`;
  return { type: "tool_result", id: f.id, content: [text(msg)], is_error: true };
}

/** The actions zot takes in a command's answer (schema/ext's CommandAction). */
const COMMAND_ACTIONS = ["prompt", "insert", "display", "open_panel", "noop"];

async function runCommand(ext, fn, f, req) {
  if (!fn) throw new CommandError(`extension ${ext.name} has no command ${JSON.stringify(f.name)}`);
  const out = await fn(f.args ?? "", req);
  if (out === undefined || out === null) return { type: "command_response", id: f.id, action: "noop" };
  if (typeof out === "string") return { type: "command_response", id: f.id, action: "display", display: out };
  if (typeof out === "object" && typeof out.action === "string") {
    if (!COMMAND_ACTIONS.includes(out.action)) {
      throw new TypeError(`the answer's action is ${JSON.stringify(out.action)}, not one of ${COMMAND_ACTIONS.join(", ")}`);
    }
    return { ...out, type: "command_response", id: f.id };
  }
  throw new CommandError(`command ${f.name} returned ${typeof out}, not an answer`);
}

function commandFailure(ext, f, e) {
  const msg = e instanceof CommandError ? e.message : `extension ${ext.name}: command ${f.name} failed: ${errorText(e)}`;
  return { type: "command_response", id: f.id, action: "noop", error: msg || "failed" };
}

// verdict asks the judges of f's event in the order they were
// registered: the first block wins; each one after a rewrite judges the
// rewritten arguments or text, and the last rewrite is the verdict's.
async function verdict(f, fns, req) {
  const r = { type: "event_intercept_response", id: f.id };
  for (const fn of fns) { // none: not intercepted, allow
    const one = await verdictOf(f, fn, req);
    if (one.block) return one;
    if (one.modified_args !== undefined) {
      r.modified_args = one.modified_args;
      f = { ...f, tool_args: one.modified_args };
    }
    if (one.replace_text !== undefined) {
      r.replace_text = one.replace_text;
      f = { ...f, text: one.replace_text };
    }
  }
  return r;
}

async function verdictOf(f, fn, req) {
  const r = { type: "event_intercept_response", id: f.id };
  const arg = f.event === "turn_start" ? (f.step ?? 0) : f.event === "assistant_message" ? (f.text ?? "") : f;
  const out = await fn(arg, req);
  if (out === undefined || out === null || out === true) return r;
  if (out === false) return { ...r, block: true };
  if (typeof out === "string" && f.event === "assistant_message") return { ...r, replace_text: out };
  if (typeof out === "object") {
    if (out.block) return out.reason ? { ...r, block: true, reason: out.reason } : { ...r, block: true };
    if (f.event === "tool_call" && out.modified_args !== undefined) r.modified_args = out.modified_args;
    if (f.event === "assistant_message" && out.replace_text !== undefined) r.replace_text = out.replace_text;
    return r;
  }
  throw new TypeError(`the ${f.event} intercept returned ${typeof out}, not a verdict`);
}
