"""Tests of the skill methods of Client and AsyncClient against the real
`zot rpc`: a project skill in .zot/skills of the working directory."""

import os
import unittest

from harness import requires_zot
from test_aio import AsyncTestCase

import zot_client as z

SKILL = "---\nname: notes\ndescription: Keep notes in NOTES.md.\n---\nAppend a line to NOTES.md; refs/style.md says how.\n"


class SkillTestCase(AsyncTestCase):
    def setUp(self) -> None:
        super().setUp()
        folder = os.path.join(self.tmp, ".zot", "skills", "notes")
        os.makedirs(os.path.join(folder, "refs"))
        with open(os.path.join(folder, "SKILL.md"), "w", encoding="utf-8") as f:
            f.write(SKILL)
        with open(os.path.join(folder, "refs", "style.md"), "w", encoding="utf-8") as f:
            f.write("One line per note.\n")
        self.folder = folder


@requires_zot
class SkillMethodsTest(SkillTestCase):
    def test_list_and_get(self):
        c = self.client()
        listed = c.list_skills()
        self.assertEqual([(s.name, s.source, s.path) for s in listed.skills], [("notes", "project", os.path.join(self.folder, "SKILL.md"))])
        self.assertEqual((listed.shadowed, listed.problems, listed.tool), ([], [], True))
        agents = c.list_agents()
        self.assertEqual((agents.agents, agents.shadowed, agents.problems, agents.tool), ([], [], [], True))
        body = c.get_skill("notes")
        self.assertEqual((body.file, body.text, body.files), ("SKILL.md", "Append a line to NOTES.md; refs/style.md says how.", ["refs/style.md"]))
        self.assertEqual(c.get_skill("notes", "refs/style.md").text, "One line per note.\n")
        with self.assertRaises(z.ZotError) as cm:
            c.get_skill("notes", "../../../outside.txt")
        self.assertEqual(cm.exception.code, "invalid_params")
        with self.assertRaises(z.ZotError) as cm:
            c.get_skill("nope")
        self.assertEqual(cm.exception.code, "not_found")

    async def test_async(self):
        async with self.real() as c:
            listed = await c.list_skills()
            self.assertEqual([s.name for s in listed.skills], ["notes"])
            self.assertEqual((await c.get_skill("notes", "refs")).text, "style.md")


if __name__ == "__main__":
    unittest.main()
