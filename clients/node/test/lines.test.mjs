// LineSplitter: LF-only framing over arbitrary chunk boundaries.

import assert from "node:assert/strict";
import { test } from "node:test";

import { LineSplitter } from "../lines.js";

/**
 * Splits bytes fed in the given chunk sizes (cycled) and returns the lines.
 * @param {Buffer} bytes
 * @param {number[]} sizes
 */
function split(bytes, sizes) {
  const lines = [];
  const s = new LineSplitter((line) => lines.push(line));
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const n = sizes[k % sizes.length];
    s.push(bytes.subarray(i, i + n));
    i += n;
  }
  s.end();
  return lines;
}

const frames = [
  JSON.stringify({ type: "text_delta", delta: "a\u2028b\u2029c" }),
  JSON.stringify({ type: "text_delta", delta: "é中😀\r" }),
  "",
  JSON.stringify({ type: "done", seq: 3 }),
];
const input = Buffer.from(frames.join("\n") + "\n", "utf8");

test("every chunking gives the same lines", () => {
  for (const sizes of [[input.length], [1], [2], [3], [5, 1, 7], [4096]]) {
    assert.deepEqual(split(input, sizes), frames, `chunk sizes ${sizes}`);
  }
});

test("U+2028, U+2029 and a lone CR do not end a line", () => {
  const lines = split(Buffer.from("x\u2028y\u2029z\rw\n", "utf8"), [1]);
  assert.deepEqual(lines, ["x\u2028y\u2029z\rw"]);
});

test("a multi-byte character split across chunks is decoded whole", () => {
  const bytes = Buffer.from("😀\n", "utf8"); // 4 bytes, then LF
  for (let cut = 1; cut < 4; cut++) {
    const lines = [];
    const s = new LineSplitter((line) => lines.push(line));
    s.push(bytes.subarray(0, cut));
    s.push(bytes.subarray(cut));
    assert.deepEqual(lines, ["😀"], `cut at ${cut}`);
  }
});

test("an unterminated last line is delivered at the end", () => {
  const lines = [];
  const s = new LineSplitter((line) => lines.push(line));
  s.push(Buffer.from("{\"a\":1}\n{\"b\""));
  assert.deepEqual(lines, ['{"a":1}']);
  s.end();
  assert.deepEqual(lines, ['{"a":1}', '{"b"']);
});
