// The skill methods against the real `zot rpc`: a project skill in
// .zot/skills of the working directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ZotClient } from "../index.js";
import { tempDir, zotBin } from "./helpers.mjs";

test("listSkills and getSkill", async (t) => {
  const dir = tempDir(t);
  const folder = join(dir, ".zot", "skills", "notes");
  mkdirSync(join(folder, "refs"), { recursive: true });
  writeFileSync(join(folder, "SKILL.md"), "---\nname: notes\ndescription: Keep notes in NOTES.md.\n---\nAppend a line to NOTES.md; refs/style.md says how.\n");
  writeFileSync(join(folder, "refs", "style.md"), "One line per note.\n");
  const client = new ZotClient({ bin: zotBin, args: ["--provider", "scripted", "--cwd", dir], env: { ZOTCORE_RPC_TOKEN: undefined } });
  t.after(() => client.close());
  await client.start();

  const listed = await client.listSkills();
  assert.deepEqual(listed.skills.map((s) => [s.name, s.source, s.path]), [["notes", "project", join(folder, "SKILL.md")]]);
  assert.deepEqual([listed.shadowed, listed.problems, listed.tool], [[], [], true]);
  const agents = await client.listAgents();
  assert.deepEqual([agents.agents, agents.shadowed, agents.problems, agents.tool], [[], [], [], true]);
  const body = await client.getSkill("notes");
  assert.deepEqual([body.file, body.text, body.files], ["SKILL.md", "Append a line to NOTES.md; refs/style.md says how.", ["refs/style.md"]]);
  assert.equal((await client.getSkill("notes", "refs/style.md")).text, "One line per note.\n");
  await assert.rejects(client.getSkill("notes", "../../../outside.txt"), (e) => e.code === "invalid_params");
  await assert.rejects(client.getSkill("nope"), (e) => e.code === "not_found");
});
