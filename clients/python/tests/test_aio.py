"""Tests of zot_client.aio.AsyncClient against the real `zot rpc` on the
scripted provider, plus the stand-in server of fake_zot.py."""

import asyncio
import io
import sys
import unittest

from harness import (
    ECHO_SCRIPT,
    EVENT_TIMEOUT,
    HERE,
    RESPONSE_TIMEOUT,
    SLEEP_SCRIPT,
    ZOT,
    ZotTestCase,
    event_types,
    requires_zot,
    text_of,
)

import zot_client as z
from zot_client.aio import AsyncClient


class AsyncTestCase(ZotTestCase, unittest.IsolatedAsyncioTestCase):
    """A ZotTestCase whose tests are coroutines."""

    def real(self, script=None, *extra, env=None) -> AsyncClient:
        child_env = {"ZOTCORE_RPC_TOKEN": None}
        child_env.update(env or {})
        self.stderr = io.StringIO()
        return AsyncClient(
            self.zot_flags(script, *extra),
            binary=ZOT,
            env=child_env,
            cwd=self.tmp,
            stderr=self.stderr,
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
        )


@requires_zot
class AsyncClientTest(AsyncTestCase):
    async def test_prompt_with_tools(self):
        async with self.real() as c:
            events = [ev async for ev in c.prompt("show me")]
            self.assertIsInstance(events[0], z.UserMessageEvent)
            self.assertIsInstance(events[-1], z.DoneEvent)
            stops = [e.stop for e in events if isinstance(e, z.TurnEndEvent)]
            self.assertEqual(stops, ["tool_use", "end_turn"])
            (result,) = [e for e in events if isinstance(e, z.ToolResultEvent)]
            self.assertFalse(result.is_error)
            self.assertEqual(len({e.prompt_id for e in events}), 1)
            again = await c.prompt("again").collect()
            self.assertEqual(text_of(again), "You said: again")
        self.assertEqual(c.returncode, 0)

    async def test_commands_and_errors(self):
        async with self.real(ECHO_SCRIPT) as c:
            self.assertEqual((await c.hello()).provider, "scripted")
            self.assertTrue((await c.ping()).pong)
            self.assertIn("scripted", [m.id for m in (await c.get_models()).models])
            self.assertEqual((await c.set_model("scripted")).model, "scripted")
            state = await c.get_state()
            self.assertEqual((state.cwd, state.busy), (self.tmp, False))
            await c.prompt("hi").collect()
            self.assertEqual(len((await c.get_messages()).messages), 2)
            # Too short to compact: the work fails with an error, then done.
            events = await c.compact().collect()
            self.assertEqual(event_types(events)[-2:], ["error", "done"])
            self.assertEqual(events[-2].code, "invalid_params")
            for text in ("two", "three"):
                await c.prompt(text).collect()
            events = await c.compact().collect()
            self.assertEqual(event_types(events)[-2:], ["compact_done", "done"])
            self.assertEqual(await c.abort(), z.AbortResult(aborted=False, dropped=0))
            await c.clear()
            self.assertEqual((await c.get_messages()).messages, [])
            with self.assertRaises(z.ZotError) as cm:
                await c.set_model("")
            self.assertEqual(cm.exception.code, "unknown_model")
            with self.assertRaises(z.ZotError) as cm:
                await c.prompt("")
            self.assertEqual(cm.exception.code, "invalid_params")

    async def test_queue_and_abort(self):
        async with self.real(SLEEP_SCRIPT) as c:
            first = await c.prompt("sleep")
            second = await c.prompt("second")
            self.assertTrue(first.started)
            self.assertEqual((second.queued, second.position), (True, 1))
            with self.assertRaises(z.ZotError) as cm:
                await c.clear()
            self.assertEqual(cm.exception.code, "busy")
            async for ev in first:
                if isinstance(ev, z.TurnEndEvent):
                    break
            self.assertTrue((await c.abort()).aborted)
            rest = await first.collect()
            self.assertEqual(event_types(rest)[-2:], ["turn_end", "done"])
            self.assertEqual(rest[-2].stop, "aborted")
            self.assertEqual(text_of(await second.collect()), "You said: second")

    async def test_cancel_one_prompt_by_id(self):
        async with self.real(SLEEP_SCRIPT) as c:
            running = await c.prompt("sleep")
            waiting = await c.prompt("second")
            behind = await c.prompt("third")
            self.assertEqual((waiting.position, behind.position), (1, 2))
            self.assertEqual(await waiting.cancel(), z.AbortResult(aborted=False, dropped=1))
            self.assertEqual(await running.cancel(), z.AbortResult(aborted=True, dropped=0))
            events = await running.collect()
            self.assertEqual(events[-2].stop, "aborted")
            events = await waiting.collect()
            self.assertEqual(event_types(events), ["turn_end", "done"], "dropped work never ran")
            self.assertEqual(text_of(await behind.collect()), "You said: third")
            self.assertEqual(await running.cancel(), z.AbortResult(aborted=False, dropped=0))
            # A stream cancelled before it was sent is never sent.
            unsent = c.prompt("never")
            self.assertEqual(await unsent.cancel(), z.AbortResult(aborted=False, dropped=0))
            with self.assertRaises(z.ZotError) as cm:
                await unsent.collect()
            self.assertEqual(cm.exception.code, "aborted")
            self.assertNotIn("never", repr((await c.get_messages()).messages), "a cancelled stream was sent")

    async def test_concurrent_requests(self):
        async with self.real(ECHO_SCRIPT) as c:
            results = await asyncio.gather(*(c.ping() for _ in range(20)), c.get_state())
            self.assertTrue(all(r.pong for r in results[:-1]))
            self.assertIsInstance(results[-1], z.StateResult)

    async def test_auth(self):
        token = "test-token-not-a-secret"
        async with self.real(env={"ZOTCORE_RPC_TOKEN": token}) as c:
            self.assertEqual((await c.hello(token)).protocol_version, 1)
        async with self.real(env={"ZOTCORE_RPC_TOKEN": token}) as c:
            with self.assertRaises(z.ZotError) as cm:
                await c.hello("wrong")
            self.assertEqual(cm.exception.code, "invalid_token")
            self.assertEqual(await asyncio.wait_for(c.wait(), RESPONSE_TIMEOUT), 1)


class AsyncFakeServerTest(AsyncTestCase):
    async def test_passthrough_and_exit(self):
        unrouted = []
        c = AsyncClient(
            command=[sys.executable, str(HERE / "fake_zot.py")],
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
            on_unrouted=unrouted.append,
        )
        async with c:
            events = await c.prompt("passthrough").collect()
            self.assertEqual(event_types(events), ["text_delta", "zz_future_event", "turn_start", "done"])
            self.assertEqual(events[0].delta, "a\u2028b")
            self.assertEqual(events[0].extra, {"zz_new_field": {"x": 1}})
            self.assertIsInstance(events[1], z.UnknownEvent)
            self.assertEqual([type(e) for e in unrouted], [z.ExtNotifyEvent])
            self.assertEqual(len(c.protocol_errors), 2)
            resp = await c.request({"type": "ping", "fake_no_id": True})
            self.assertEqual((resp.id, resp.code), (None, "line_too_long"))
            stream = c.prompt("die")
            self.assertIsInstance(await stream.__anext__(), z.TurnStartEvent)
            with self.assertRaises(z.ZotClosedError) as cm:
                await stream.__anext__()
            self.assertEqual(cm.exception.returncode, 3)
        self.assertEqual(c.returncode, 3)


if __name__ == "__main__":
    unittest.main()
