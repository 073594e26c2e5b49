// The session-store methods of ZotClient against the real `zot rpc`: a
// session kept with --continue is listed, forked before its last prompt
// (the fork loaded) and loaded back.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { guard, openClient } from "./helpers.mjs";

test("listSessions, forkSession, loadSession", async (t) => {
  const home = mkdtempSync(join(tmpdir(), "zot-node-home-"));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const client = await openClient(t, { args: ["--continue"], env: { ZOT_HOME: home } });
  await guard(client.prompt("one").collect(), "prompt one");
  await guard(client.prompt("two").collect(), "prompt two");
  const listed = await client.listSessions();
  assert.equal(listed.length, 1);
  assert.equal(listed[0].current, true);
  assert.equal(listed[0].title, "one");
  const parent = listed[0].id;

  const fork = await client.forkSession();
  assert.equal(fork.loaded, true);
  assert.equal(fork.session.parent_id, parent);
  assert.equal(fork.session.message_count, fork.at_index);
  assert.equal(fork.message.content[0].text, "two");
  assert.equal((await client.getState()).message_count, fork.at_index);
  const other = await client.forkSession({ sessionId: parent, atIndex: 0, load: false });
  assert.equal(other.loaded, false);
  assert.equal(other.session.message_count, 0);

  assert.equal((await client.loadSession(parent)).id, parent);
  assert.equal((await client.listSessions()).length, 3);
  assert.deepEqual(await client.listSessions(join(home, "elsewhere")), []);
  await assert.rejects(client.loadSession("20200101T000000Z-0000000000000000"), (err) => err.code === "not_found");
  await assert.rejects(client.forkSession({ atIndex: 0, atMessageId: "x" }), (err) => err.code === "invalid_params");
});
