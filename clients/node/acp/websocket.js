// A small WebSocket client (RFC 6455) on node:net and node:tls, for the
// ACP client: text messages only, as ACP over WebSocket sends them. Node's
// global WebSocket (Node ≥ 22) cannot send an Authorization header nor say
// that the server answered 401, so the client has its own: the opening
// handshake with extra headers, masked frames out, fragments joined, pings
// answered, the closing handshake. No extensions are offered.

import { createHash, randomBytes } from "node:crypto";
import { connect as netConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** The server answered the upgrade request with something other than 101. */
export class HandshakeError extends Error {
  /**
   * @param {number} status
   * @param {Record<string, string>} headers
   * @param {string} body
   */
  constructor(status, headers, body) {
    super(`HTTP ${status}: ${body.trim() || headers["www-authenticate"] || ""}`);
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

/** One client connection; `start` sets its handlers. */
export class WebSocket {
  /**
   * Opens a connection; resolves once the handshake is done.
   * @param {string} url ws:// or wss://
   * @param {{headers?: Record<string, string>, protocols?: string[], timeoutMs?: number, maxMessage?: number}} [opts]
   * @returns {Promise<WebSocket>}
   */
  static open(url, opts = {}) {
    const u = new URL(url);
    if ((u.protocol !== "ws:" && u.protocol !== "wss:") || !u.hostname) {
      return Promise.reject(new TypeError(`${url}: a WebSocket URL starts with ws:// or wss:// and names a host`));
    }
    const port = Number(u.port) || (u.protocol === "wss:" ? 443 : 80);
    const host = u.hostname.replace(/^\[|\]$/g, "");
    const key = randomBytes(16).toString("base64");
    return new Promise((resolve, reject) => {
      const sock =
        u.protocol === "wss:" ? tlsConnect({ host, port, servername: host }) : netConnect({ host, port });
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error(`${url}: no answer within ${opts.timeoutMs ?? 30000} ms`));
      }, opts.timeoutMs ?? 30000);
      sock.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      sock.once(u.protocol === "wss:" ? "secureConnect" : "connect", () => {
        const lines = [
          `GET ${u.pathname || "/"}${u.search} HTTP/1.1`,
          `Host: ${u.host}`,
          "Upgrade: websocket",
          "Connection: Upgrade",
          `Sec-WebSocket-Key: ${key}`,
          "Sec-WebSocket-Version: 13",
        ];
        if (opts.protocols?.length) lines.push(`Sec-WebSocket-Protocol: ${opts.protocols.join(", ")}`);
        for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
        sock.write(lines.join("\r\n") + "\r\n\r\n");
      });
      let buf = Buffer.alloc(0);
      const onData = (/** @type {Buffer} */ chunk) => {
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) {
          if (buf.length > 65536) sock.destroy(new Error("the server's handshake answer is too long"));
          return;
        }
        const head = buf.subarray(0, end).toString("latin1").split("\r\n");
        const rest = buf.subarray(end + 4);
        const status = Number(head[0].split(" ")[1]);
        /** @type {Record<string, string>} */
        const headers = {};
        for (const line of head.slice(1)) {
          const i = line.indexOf(":");
          if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
        }
        if (status !== 101) {
          // The short body the server sends with a refusal.
          const want = Number(headers["content-length"] || 0);
          let body = rest;
          const finish = () => {
            clearTimeout(timer);
            sock.destroy();
            reject(new HandshakeError(status, headers, body.toString("utf8")));
          };
          if (body.length >= want) return finish();
          sock.removeListener("data", onData);
          sock.on("data", (/** @type {Buffer} */ more) => {
            body = Buffer.concat([body, more]);
            if (body.length >= want) finish();
          });
          sock.once("end", finish);
          return;
        }
        const accept = createHash("sha1").update(key + GUID).digest("base64");
        if (headers["sec-websocket-accept"] !== accept) {
          clearTimeout(timer);
          sock.destroy();
          return reject(new Error("the server's upgrade answer is not a WebSocket handshake"));
        }
        clearTimeout(timer);
        sock.removeListener("data", onData);
        sock.removeAllListeners("error");
        sock.pause(); // until start: nothing is read before the handlers are set
        resolve(new WebSocket(sock, headers, rest, opts.maxMessage ?? 64 << 20));
      };
      sock.on("data", onData);
    });
  }

  /**
   * @param {import("node:net").Socket} sock
   * @param {Record<string, string>} headers
   * @param {Buffer} rest
   * @param {number} maxMessage
   */
  constructor(sock, headers, rest, maxMessage) {
    this.sock = sock;
    this.headers = headers;
    this.maxMessage = maxMessage;
    /** @type {(text: string) => void} */
    this.onMessage = () => {};
    /** @type {(code: number, reason: string) => void} */
    this.onClose = () => {};
    this.closed = false;
    this.buf = Buffer.alloc(0);
    this.rest = rest;
    /** @type {Buffer[]} */
    this.parts = [];
    this.size = 0;
    sock.on("error", () => this.#end(1006, "the connection failed"));
    sock.on("close", () => this.#end(1006, ""));
  }

  /**
   * Sets the handlers and starts reading: `onMessage(text)` gets each
   * text message, `onClose(code, reason)` the end, once.
   * @param {(text: string) => void} onMessage
   * @param {(code: number, reason: string) => void} onClose
   */
  start(onMessage, onClose) {
    this.onMessage = onMessage;
    this.onClose = onClose;
    this.sock.on("data", (chunk) => this.#feed(chunk));
    if (this.rest.length) this.#feed(this.rest);
    this.rest = Buffer.alloc(0);
    this.sock.resume();
  }

  /** @param {Buffer} chunk */
  #feed(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      const b = this.buf;
      if (b.length < 2) return;
      const fin = (b[0] & 0x80) !== 0;
      const op = b[0] & 0x0f;
      const masked = (b[1] & 0x80) !== 0;
      let n = b[1] & 0x7f;
      let at = 2;
      if (n === 126) {
        if (b.length < 4) return;
        n = b.readUInt16BE(2);
        at = 4;
      } else if (n === 127) {
        if (b.length < 10) return;
        n = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      if (n > this.maxMessage) return this.close(1009, "message too big");
      const maskAt = at;
      if (masked) at += 4;
      if (b.length < at + n) return;
      let data = b.subarray(at, at + n);
      if (masked) {
        const mask = b.subarray(maskAt, maskAt + 4);
        data = Buffer.from(data.map((c, i) => c ^ mask[i % 4]));
      }
      this.buf = b.subarray(at + n);
      if (op === 0x9) this.#send(0xa, data);
      else if (op === 0xa) continue;
      else if (op === 0x8) {
        const code = data.length >= 2 ? data.readUInt16BE(0) : 1005;
        if (!this.closed) this.#send(0x8, data.subarray(0, 2));
        this.sock.end();
        this.#end(code, data.subarray(2).toString("utf8"));
        return;
      } else if (op === 0x2) return this.close(1003, "binary messages are not ACP");
      else if (op === 0x1 || op === 0x0) {
        this.parts.push(Buffer.from(data));
        this.size += data.length;
        if (this.size > this.maxMessage) return this.close(1009, "message too big");
        if (fin) {
          const text = Buffer.concat(this.parts).toString("utf8");
          this.parts = [];
          this.size = 0;
          this.onMessage(text);
        }
      } else return this.close(1002, "unknown opcode");
    }
  }

  /**
   * @param {number} op
   * @param {Buffer} payload
   */
  #send(op, payload) {
    if (this.sock.destroyed) return;
    const n = payload.length;
    const head = n < 126 ? Buffer.from([0x80 | op, 0x80 | n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    if (n >= 126 && n < 65536) {
      head[0] = 0x80 | op;
      head[1] = 0x80 | 126;
      head.writeUInt16BE(n, 2);
    } else if (n >= 65536) {
      head[0] = 0x80 | op;
      head[1] = 0x80 | 127;
      head.writeBigUInt64BE(BigInt(n), 2);
    }
    const mask = randomBytes(4);
    const body = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
    this.sock.write(Buffer.concat([head, mask, body]));
  }

  /** Sends one text message. @param {string} text */
  send(text) {
    if (this.closed) throw new Error("the WebSocket connection is closed");
    this.#send(0x1, Buffer.from(text, "utf8"));
  }

  /**
   * Sends a close frame and ends the connection (idempotent).
   * @param {number} [code]
   * @param {string} [reason]
   */
  close(code = 1000, reason = "") {
    if (this.closed) return;
    const p = Buffer.alloc(2 + Buffer.byteLength(reason));
    p.writeUInt16BE(code, 0);
    p.write(reason, 2);
    this.#send(0x8, p);
    this.sock.end();
    setTimeout(() => this.sock.destroy(), 1000).unref();
    this.#end(code, reason);
  }

  /**
   * @param {number} code
   * @param {string} reason
   */
  #end(code, reason) {
    if (this.closed) return;
    this.closed = true;
    this.onClose(code, reason);
  }
}
