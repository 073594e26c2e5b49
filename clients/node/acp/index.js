// A client of zot's Agent Client Protocol door (JSON-RPC 2.0), with no
// dependencies: a daemon's WebSocket listener by URL with a bearer token
// (connect), or a `zot acp` it starts (spawn).
//
// Over WebSocket a dropped connection is dialed again and every session
// the client had open is resumed (session/resume): a turn under way goes
// on in the daemon and its updates reach onUpdate again from the moment
// the session was resumed. What the daemon sent to the lost connection is
// not sent again (the session file keeps it: loadSession replays it), and
// the turn's answer went there: prompt resolves once the daemon says the
// session is idle, with reconnected true and no stop reason.

import { spawn as spawnProcess } from "node:child_process";

import { METHODS, PROTOCOL_VERSION } from "./protocol.js";
import { HandshakeError, WebSocket } from "./websocket.js";

export { METHODS, PROTOCOL_VERSION };

/** The agent's error answer: `code` (JSON-RPC), `kind` (busy, unknown_session, connection_lost, …), `data`. */
export class AcpError extends Error {
  /**
   * @param {number} code
   * @param {string} message
   * @param {Record<string, any>} [data]
   */
  constructor(code, message, data) {
    super(message);
    this.name = "AcpError";
    this.code = code;
    this.data = data ?? {};
    this.kind = this.data.kind ?? "";
  }
}

/** The daemon refused the connection: `status` 401 (a missing or wrong token), 403, 429. */
export class RefusedError extends AcpError {
  /**
   * @param {string} url
   * @param {number} status
   * @param {string} why
   */
  constructor(url, status, why) {
    const msg =
      status === 401 && why.includes("invalid_token")
        ? `${url} refused the token (HTTP 401, invalid_token): check the token against the daemon's token file`
        : status === 401
          ? `${url} needs a token (HTTP 401): pass token or set ZOT_TOKEN`
          : `${url} refused the connection (HTTP ${status}): ${why}`;
    super(-32000, msg, { kind: "refused", status });
    this.name = "RefusedError";
    this.status = status;
  }
}

const lostError = (/** @type {string} */ what) =>
  new AcpError(-32000, `the connection dropped before ${what} was answered`, { kind: "connection_lost" });

/** @param {string} url */
function acpURL(url) {
  const u = new URL(url);
  if (u.protocol !== "ws:" && u.protocol !== "wss:") {
    throw new TypeError(`${url}: the URL of a daemon's listener starts with ws:// or wss://`);
  }
  if (u.pathname === "" || u.pathname === "/") u.pathname = "/acp";
  return u.toString();
}

/**
 * @param {string} url
 * @param {string | undefined} token
 * @param {number} timeoutMs
 */
async function dialWS(url, token, timeoutMs) {
  try {
    const ws = await WebSocket.open(url, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      protocols: ["acp"],
      timeoutMs,
    });
    return {
      /** @param {string} text */
      send: (text) => ws.send(text),
      close: () => ws.close(),
      /** @param {(text: string) => void} onMessage @param {() => void} onEnd */
      start(onMessage, onEnd) {
        ws.start(onMessage, onEnd);
        if (ws.closed) onEnd();
      },
    };
  } catch (err) {
    if (err instanceof HandshakeError) {
      throw new RefusedError(url, err.status, err.headers["www-authenticate"] || err.body.trim());
    }
    throw new AcpError(-32000, `no zot daemon answers at ${url}: ${/** @type {Error} */ (err).message}`, {
      kind: "connection_lost",
    });
  }
}

/**
 * @param {string[]} argv
 * @param {{env?: NodeJS.ProcessEnv, cwd?: string, stderr?: "inherit" | "ignore" | "pipe"}} o
 */
function spawnLink(argv, o) {
  const child = spawnProcess(argv[0], argv.slice(1), {
    env: o.env,
    cwd: o.cwd,
    stdio: ["pipe", "pipe", o.stderr ?? "ignore"],
  });
  const exited = new Promise((resolve) => child.once("close", resolve));
  child.stdin.on("error", () => {});
  return {
    /** @param {string} text */
    send: (text) => {
      child.stdin.write(text + "\n");
    },
    close: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
    /** @param {(text: string) => void} onMessage @param {() => void} onEnd */
    start(onMessage, onEnd) {
      let buf = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (/** @type {string} */ chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim()) onMessage(line);
        }
      });
      child.stdout.once("end", onEnd);
      child.once("error", onEnd);
    },
  };
}

/** One connection to an ACP agent; make one with connect or spawn. */
export class AcpClient {
  /**
   * @param {() => Promise<any>} dial
   * @param {any} o
   */
  constructor(dial, o) {
    this.dial = dial;
    this.onUpdate = o.onUpdate;
    this.onPermission = o.onPermission;
    this.reconnect = !!o.reconnect;
    this.attempts = o.attempts ?? 10;
    this.nextId = 1;
    /** @type {Map<number, {method: string, params: any, gen: number, resolve: (v: any) => void, reject: (e: any) => void}>} */
    this.pending = new Map();
    /** @type {Map<string, string>} open sessions: id → cwd */
    this.sessions = new Map();
    this.gen = 0;
    this.closed = false;
    /** @type {Promise<void>} */
    this.ready = Promise.resolve();
    /** @type {AcpError | null} */
    this.failure = null;
    this.initParams = {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: o.clientName ?? "zot-acp-node", version: "1" },
    };
    /** @type {any} */
    this.info = null;
  }

  /** @param {any} link */
  attach(link) {
    this.link = link;
    const gen = this.gen;
    link.start(
      (/** @type {string} */ text) => this.#message(text),
      () => {
        if (gen === this.gen) this.#dropped();
      },
    );
  }

  /** @param {any} msg */
  #write(msg) {
    try {
      this.link.send(JSON.stringify(msg));
    } catch {
      // The drop is seen by the link's end, which answers the call.
    }
  }

  /**
   * @param {string} method
   * @param {any} params
   * @param {boolean} waitReady
   */
  async #start(method, params, waitReady = true) {
    if (waitReady) await this.ready;
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, params, gen: this.gen, resolve, reject });
      this.#write({ jsonrpc: "2.0", id, method, params });
    });
  }

  /**
   * Makes any request (zot's `_zot/` methods among them) and resolves to its result.
   * @param {string} method
   * @param {any} [params]
   */
  call(method, params = {}) {
    return this.#start(method, params);
  }

  /** @param {string} text */
  #message(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof msg.method === "string") return this.#serve(msg);
    const call = this.pending.get(msg.id);
    if (!call) return;
    this.pending.delete(msg.id);
    if (msg.error) {
      const e = msg.error;
      call.reject(new AcpError(e.code ?? -32603, e.message ?? "", e.data));
      return;
    }
    const p = call.params ?? {};
    const r = msg.result ?? {};
    if (call.method === METHODS.SESSION_NEW && r.sessionId) this.sessions.set(r.sessionId, p.cwd);
    if (call.method === METHODS.SESSION_LOAD || call.method === METHODS.SESSION_RESUME) this.sessions.set(p.sessionId, p.cwd);
    if (call.method === METHODS.SESSION_CLOSE || call.method === METHODS.SESSION_DELETE) this.sessions.delete(p.sessionId);
    call.resolve(msg.result);
  }

  /** @param {any} msg */
  #serve(msg) {
    if (msg.method === METHODS.SESSION_UPDATE) {
      this.onUpdate?.(msg.params ?? {});
      return;
    }
    if (msg.id === undefined) return;
    const gen = this.gen;
    if (msg.method !== METHODS.SESSION_REQUEST_PERMISSION) {
      this.#answer(gen, msg.id, undefined, { code: -32601, message: `method not found: ${msg.method}` });
      return;
    }
    Promise.resolve()
      .then(() => this.onPermission?.(msg.params ?? {}))
      .catch(() => undefined)
      .then((choice) => {
        const outcome = choice ? { outcome: "selected", optionId: choice } : { outcome: "cancelled" };
        this.#answer(gen, msg.id, { outcome });
      });
  }

  /**
   * An answer to a question of a lost connection is dropped: the daemon
   * counted it rejected, and ids start again on a new connection.
   * @param {number} gen
   * @param {any} id
   * @param {any} result
   * @param {any} [error]
   */
  #answer(gen, id, result, error) {
    if (gen !== this.gen || this.closed) return;
    this.#write(error ? { jsonrpc: "2.0", id, error } : { jsonrpc: "2.0", id, result });
  }

  #failAll(/** @type {AcpError} */ err) {
    this.failure = err;
    for (const call of this.pending.values()) call.reject(err);
    this.pending.clear();
  }

  #dropped() {
    if (this.closed) return;
    if (!this.reconnect) {
      this.#failAll(new AcpError(-32000, "the connection to the agent ended", { kind: "connection_lost" }));
      return;
    }
    const lost = [...this.pending.entries()].filter(([, c]) => c.gen === this.gen);
    for (const [id] of lost) this.pending.delete(id);
    this.gen++;
    /** @type {() => void} */
    let open = () => {};
    this.ready = new Promise((resolve) => (open = resolve));
    this.recovery = this.#redial(lost.map(([, c]) => c), open);
  }

  /**
   * @param {Array<{method: string, params: any, resolve: (v: any) => void, reject: (e: any) => void}>} lost
   * @param {() => void} open
   */
  async #redial(lost, open) {
    let wait = 100;
    let link = null;
    for (let i = 0; i < this.attempts && !this.closed; i++) {
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 2000);
      try {
        link = await this.dial();
        break;
      } catch (err) {
        if (err instanceof RefusedError) break;
      }
    }
    if (!link || this.closed) {
      link?.close();
      this.#failAll(new AcpError(-32000, "the connection to the agent dropped and could not be made again", { kind: "connection_lost" }));
      for (const c of lost) c.reject(lostError(c.method));
      open();
      return;
    }
    this.attach(link);
    try {
      await this.#start(METHODS.INITIALIZE, this.initParams, false);
      for (const [sessionId, cwd] of [...this.sessions]) {
        await this.#start(METHODS.SESSION_RESUME, { sessionId, cwd, mcpServers: [] }, false).catch(() =>
          this.sessions.delete(sessionId),
        );
      }
    } catch {
      // The calls below say what failed.
    }
    open();
    for (const c of lost) {
      if (c.method === METHODS.SESSION_PROMPT) {
        await this.#awaitIdle(c.params.sessionId);
        c.resolve({ _reconnected: true });
      } else {
        c.reject(lostError(c.method));
      }
    }
  }

  /** @param {string} sessionId */
  async #awaitIdle(sessionId) {
    while (!this.closed) {
      let st;
      try {
        st = await this.call(METHODS.ZOT_STATUS, {});
      } catch {
        return;
      }
      if (!(st.sessions ?? []).some((/** @type {any} */ s) => s.sessionId === sessionId && s.busy)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Opens a session whose tools work in `cwd`; resolves to its id. @param {string} cwd */
  async newSession(cwd, mcpServers = []) {
    return (await this.call(METHODS.SESSION_NEW, { cwd, mcpServers })).sessionId;
  }

  /**
   * Opens a stored session; its history is replayed through onUpdate before it resolves.
   * @param {string} sessionId
   * @param {string} cwd
   */
  async loadSession(sessionId, cwd) {
    await this.call(METHODS.SESSION_LOAD, { sessionId, cwd, mcpServers: [] });
  }

  /**
   * Opens a session without replaying it.
   * @param {string} sessionId
   * @param {string} cwd
   */
  async resumeSession(sessionId, cwd) {
    await this.call(METHODS.SESSION_RESUME, { sessionId, cwd, mcpServers: [] });
  }

  /**
   * Sends `text`; resolves when the turn ends, its updates having reached onUpdate.
   * @param {string} sessionId
   * @param {string} text
   */
  async prompt(sessionId, text) {
    const res = await this.call(METHODS.SESSION_PROMPT, { sessionId, prompt: [{ type: "text", text }] });
    if (res?._reconnected) return { stopReason: null, reconnected: true, meta: {} };
    return { stopReason: res.stopReason, reconnected: false, meta: res._meta ?? {} };
  }

  /** Asks the agent to end the session's turn (its prompt resolves `cancelled`). @param {string} sessionId */
  async cancel(sessionId) {
    await this.ready;
    this.#write({ jsonrpc: "2.0", method: METHODS.SESSION_CANCEL, params: { sessionId } });
  }

  /** Ends the connection (a spawned agent is told by the end of its input, and waited for). */
  async close() {
    if (this.closed) return;
    this.closed = true;
    await this.link?.close();
    this.#failAll(new AcpError(-32000, "the client was closed", { kind: "connection_lost" }));
  }
}

/**
 * @param {AcpClient} client
 * @param {any} link
 */
async function begin(client, link) {
  client.attach(link);
  try {
    client.info = await client.call(METHODS.INITIALIZE, client.initParams);
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}

/**
 * Connects to a daemon's listener (ws:// or wss://; the path defaults to
 * /acp) with `token` (default: $ZOT_TOKEN). A refused token rejects with
 * RefusedError.
 * @param {string} url
 * @param {import("./index.js").ConnectOptions} [o]
 * @returns {Promise<AcpClient>}
 */
export async function connect(url, o = {}) {
  const u = acpURL(url);
  const token = o.token ?? process.env.ZOT_TOKEN;
  const dial = () => dialWS(u, token, o.timeoutMs ?? 30000);
  const client = new AcpClient(dial, { ...o, reconnect: o.reconnect ?? true });
  return begin(client, await dial());
}

/**
 * Starts `zot acp` (`bin`, else $ZOT_BIN, else zot on PATH) with `args`
 * and speaks ACP on its stdin and stdout.
 * @param {import("./index.js").SpawnOptions} [o]
 * @returns {Promise<AcpClient>}
 */
export async function spawn(o = {}) {
  const argv = [o.bin ?? process.env.ZOT_BIN ?? "zot", "acp", ...(o.args ?? [])];
  const client = new AcpClient(async () => spawnLink(argv, o), { ...o, reconnect: false });
  return begin(client, spawnLink(argv, o));
}
