"""Tests of steer, follow_up, inject_context and external_event against
the real `zot rpc`: a steer sent while the model answers lands in the
running prompt's stream and the model answers it; context reaches the next
model call; an external event runs as a prompt of its own."""

import unittest

from harness import ZotTestCase, requires_zot

import zot_client as z

SLOW_THEN_ECHO = {
    "turns": [
        {"steps": [{"text": "first answer", "chunk": 2, "delay_ms": 100}]},
        {"steps": [{"echo": True}]},
    ]
}


def user_messages(events):
    return [e for e in events if isinstance(e, z.UserMessageEvent)]


def last_text(events):
    msgs = [e for e in events if isinstance(e, z.AssistantMessageEvent)]
    return "".join(b.text for b in msgs[-1].content if isinstance(b, z.TextBlock))


@requires_zot
class SteerTest(ZotTestCase):
    def test_steer_lands_in_the_running_prompt(self):
        c = self.client(SLOW_THEN_ECHO)
        stream = c.prompt("go")
        seen = []
        for ev in stream:
            seen.append(ev)
            if isinstance(ev, z.AssistantStartEvent):
                break
        self.assertIsNone(c.steer("shorter please"))
        seen += stream.collect()
        steers = user_messages(seen)[1:]
        self.assertEqual([(u.kind, u.content[0].text) for u in steers], [("steer", "shorter please")])
        self.assertEqual(last_text(seen), "You said: shorter please")

    def test_idle_steer_context_and_event(self):
        c = self.client({"turns": [{"steps": [{"echo": True}]}]})
        s = c.steer("hello")
        self.assertIsNotNone(s)
        self.assertEqual(last_text(s.collect()), "You said: hello")
        self.assertEqual(c.inject_context("disk almost full", source="watcher"), 1)
        evs = c.external_event({"alert": "build failed"}, source="ci").collect()
        kinds = [(u.kind, u.source) for u in user_messages(evs)]
        self.assertEqual(kinds, [("event", "ci"), ("context", "watcher")])
        with self.assertRaises(z.ZotError) as cm:
            c.inject_context("x" * (64 * 1024 + 1))
        self.assertEqual(cm.exception.code, "limit_exceeded")
        self.assertEqual(last_text(c.follow_up("next").collect()), "You said: next")


if __name__ == "__main__":
    unittest.main()
