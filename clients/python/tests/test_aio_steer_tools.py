"""Tests of the asyncio client's client tools, steering, context from
outside, a prompt's record and its own settings, against the real
`zot rpc` on the scripted provider."""

import asyncio
import unittest
from typing import Optional

from harness import requires_zot
from test_aio import AsyncTestCase

import zot_client as z

SLOW_THEN_ECHO = {
    "turns": [
        {"steps": [{"text": "first answer", "chunk": 2, "delay_ms": 100}]},
        {"steps": [{"echo": True}]},
    ]
}

# Every model call asks for ls and reports 1000 input tokens: $0.001 at
# the scripted model's made-up prices.
LOOP = {
    "turns": [
        {"steps": [{"text": "again", "tool_calls": [{"name": "ls", "args": {"path": "."}}], "usage": {"input": 1000}}]}
    ]
}


def _calls(*calls):
    return {"turns": [{"steps": [{"tool_calls": [{"name": n, "args": a}]}, {"text": "done"}]} for n, a in calls]}


def user_messages(events):
    return [e for e in events if isinstance(e, z.UserMessageEvent)]


def last_text(events):
    msgs = [e for e in events if isinstance(e, z.AssistantMessageEvent)]
    return "".join(b.text for b in msgs[-1].content if isinstance(b, z.TextBlock))


def tool_results(events):
    return [(e.is_error, e.content[0].text) for e in events if isinstance(e, z.ToolResultEvent)]


@requires_zot
class AsyncToolsTest(AsyncTestCase):
    async def test_decorated_functions_run(self):
        script = _calls(("weather", {"city": "Oslo"}), ("shout", {"text": "hi"}), ("broken", {}))
        async with self.real(script) as c:

            @c.tool(read_only=True)
            async def weather(city: str, unit: Optional[str] = None) -> str:
                """The weather in a city."""
                await asyncio.sleep(0)
                return "fog in " + city

            @c.tool
            def shout(text: str) -> str:  # a plain function: run on the executor
                return text.upper()

            @c.tool
            async def broken() -> str:
                raise RuntimeError("the service is down")

            evs = await c.prompt("weather in Oslo").collect()
            call = next(e for e in evs if isinstance(e, z.ClientToolCallEvent))
            self.assertEqual((call.tool, call.args), ("weather", {"city": "Oslo"}))
            self.assertEqual(tool_results(evs), [(False, "fog in Oslo")])
            self.assertEqual(tool_results(await c.prompt("shout").collect()), [(False, "HI")])
            self.assertEqual(tool_results(await c.prompt("broken").collect()), [(True, "the service is down")])

            with self.assertRaises(z.ZotError) as cm:
                await c.register_tools(z.Tool(shout, name="bash"))
            self.assertEqual(cm.exception.code, "name_taken")

            @c.tool(name="read")
            def taken() -> str:
                return ""

            with self.assertRaises(z.ZotError) as cm:
                await c.get_state()  # the next command registers it first
            self.assertEqual(cm.exception.code, "name_taken")
            self.assertEqual(sorted(await c.unregister_tools("broken")), ["shout", "weather"])
            with self.assertRaises(z.ZotError) as cm:
                await c.unregister_tools("broken")
            self.assertEqual(cm.exception.code, "not_found")


@requires_zot
class AsyncSteerTest(AsyncTestCase):
    async def test_steer_lands_in_the_running_prompt(self):
        async with self.real(SLOW_THEN_ECHO) as c:
            stream = c.prompt("go")
            seen = []
            async for ev in stream:
                seen.append(ev)
                if isinstance(ev, z.AssistantStartEvent):
                    break
            self.assertIsNone(await c.steer("shorter please"))
            seen += await stream.collect()
            kinds = [(u.kind, u.content[0].text) for u in user_messages(seen)[1:]]
            self.assertEqual(kinds, [("steer", "shorter please")])
            self.assertEqual(last_text(seen), "You said: shorter please")

    async def test_idle_steer_event_and_follow_up(self):
        async with self.real({"turns": [{"steps": [{"echo": True}]}]}) as c:
            s = await c.steer("hello")
            self.assertIsNotNone(s)
            self.assertEqual(last_text(await s.collect()), "You said: hello")
            self.assertEqual(await c.inject_context("disk almost full", source="watcher"), 1)
            evs = await c.external_event({"alert": "build failed"}, source="ci").collect()
            self.assertEqual([(u.kind, u.source) for u in user_messages(evs)], [("event", "ci"), ("context", "watcher")])
            with self.assertRaises(z.ZotError) as cm:
                await c.inject_context("x" * (64 * 1024 + 1))
            self.assertEqual(cm.exception.code, "limit_exceeded")
            self.assertEqual(last_text(await c.follow_up("next").collect()), "You said: next")
            res = await c.run("last")
            self.assertEqual((res.stop, res.text, res.turns), ("end_turn", "You said: last", 1))


@requires_zot
class AsyncPromptSettingsTest(AsyncTestCase):
    async def test_budget_and_step_limit(self):
        async with self.real(LOOP, "--permission", "allow", "--max-cost", "0.0025") as c:
            res = await c.run("loop", max_cost_usd=0.0015)
            self.assertEqual((res.stop, res.turns), ("max_cost", 2))
            with self.assertRaises(z.ZotError) as cm:
                await c.run("loop", max_steps=2)
            self.assertEqual(cm.exception.code, "max_steps")
            self.assertEqual(cm.exception.result.turns, 2)
            res = await c.run("loop")
            self.assertEqual((res.stop, res.turns), ("max_cost", 3))
            with self.assertRaises(TypeError):
                c.prompt("loop", max_stepz=2)


if __name__ == "__main__":
    unittest.main()
