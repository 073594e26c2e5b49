"""Sub-agents (the task tool) through zot_client against the real zot."""

import json
import unittest

from harness import ZotTestCase, requires_zot

import zot_client as z

SCRIPT = {
    "turns": [
        {
            "steps": [
                {"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "list files", "prompt": "child: list the files"}}]},
                {"text": "The child is done."},
            ]
        },
        {"match": "child:", "steps": [{"tool_calls": [{"name": "ls", "args": {}}]}, {"text": "two files"}]},
    ]
}


@requires_zot
class AgentsTest(ZotTestCase):
    def test_child_events_nested_under_the_task_call(self):
        c = self.client(SCRIPT)
        hello = c.hello(child_events=True)
        self.assertTrue(hello.child_events)
        events = c.prompt("go").collect()
        child = [e for e in events if isinstance(e, z.ChildEvent)]
        self.assertTrue(child, "no child_event")
        self.assertEqual({e.parent_id for e in child}, {"t1"})
        self.assertEqual(child[0].event["type"], "user_message")
        self.assertNotIn("done", [e.event["type"] for e in child])
        result = next(e for e in events if isinstance(e, z.ToolResultEvent) and e.id == "t1")
        self.assertEqual(json.loads(result.content[0].text)["text"], "two files")

    def test_plain_client_sees_only_the_task_call(self):
        c = self.client(SCRIPT)
        c.hello()
        events = c.prompt("go").collect()
        self.assertFalse([e for e in events if isinstance(e, z.ChildEvent)])
        progress = "".join(e.text for e in events if isinstance(e, z.ToolProgressEvent) and e.id == "t1")
        self.assertIn("list files: step 1: ls", progress)


if __name__ == "__main__":
    unittest.main()
