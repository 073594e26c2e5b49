// LF-only line framing for zot's NDJSON stream.

import { StringDecoder } from "node:string_decoder";

/**
 * Splits a byte stream into lines on "\n" only. Unlike node:readline it
 * does not treat U+2028, U+2029 or a lone "\r" as line ends, which JSON
 * text may contain. A chunk may end mid-line or inside a multi-byte UTF-8
 * character; the decoder carries the partial character into the next chunk.
 */
export class LineSplitter {
  /** @param {(line: string) => void} onLine called with each line, without its "\n" */
  constructor(onLine) {
    this._onLine = onLine;
    this._decoder = new StringDecoder("utf8");
    /** @type {string[]} pieces of the current, unfinished line */
    this._parts = [];
  }

  /**
   * Feeds the next chunk of bytes (or text).
   * @param {Buffer | string} chunk
   */
  push(chunk) {
    const text = typeof chunk === "string" ? chunk : this._decoder.write(chunk);
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      this._parts.push(text.slice(start, nl));
      const line = this._parts.length === 1 ? this._parts[0] : this._parts.join("");
      this._parts = [];
      this._onLine(line);
      start = nl + 1;
    }
    if (start < text.length) this._parts.push(text.slice(start));
  }

  /** Ends the input; a last line without "\n" is delivered too. */
  end() {
    const rest = this._decoder.end();
    if (rest) this._parts.push(rest);
    if (this._parts.length > 0) {
      const line = this._parts.join("");
      this._parts = [];
      this._onLine(line);
    }
  }
}
