"""Tests, against the real `zot rpc`, of what a client newer than the server
relies on: tool approval (``--approve``, ``on_permission_request``,
``answer_permission``), hello's protocol versions, lenient commands
(null for absent, unknown members ignored) and set_model with any id."""

import asyncio
import io
import os
import threading
import time
import unittest

from harness import EVENT_TIMEOUT, RESPONSE_TIMEOUT, ZOT, ZotTestCase, requires_zot

import zot_client as z
from zot_client.aio import AsyncClient

# The first prompt calls write, then bash, then answers.
APPROVAL_SCRIPT = {
    "turns": [
        {
            "steps": [
                {"tool_calls": [{"name": "write", "args": {"path": "a.txt", "content": "x"}}]},
                {"tool_calls": [{"name": "bash", "args": {"command": "echo hi"}}]},
                {"text": "done"},
            ]
        }
    ]
}


def results(events):
    return [e for e in events if isinstance(e, z.ToolResultEvent)]


@requires_zot
class PermissionTest(ZotTestCase):
    def test_on_permission_request_decides(self):
        asked = []
        on_reader = []

        def decide(ev):
            asked.append((ev.tool, ev.request_id, ev.call_id))
            on_reader.append(threading.current_thread().name == "zot-rpc-stdout")
            if ev.tool == "bash":
                return ("reject", "no shell today")
            return "allow_once"

        self.stderr = io.StringIO()
        c = z.Client(
            self.zot_flags(APPROVAL_SCRIPT, "--approve"),
            binary=ZOT,
            env={"ZOTCORE_RPC_TOKEN": None},
            cwd=self.tmp,
            stderr=self.stderr,
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
            on_permission_request=decide,
        )
        self.addCleanup(self._shut, c)
        events = c.prompt("go").collect()
        self.assertEqual([a[0] for a in asked], ["write", "bash"])
        self.assertEqual(on_reader, [False, False])
        requests = [e for e in events if isinstance(e, z.PermissionRequestEvent)]
        self.assertEqual([r.request_id for r in requests], [a[1] for a in asked])
        res = results(events)
        self.assertEqual([r.is_error for r in res], [False, True])
        self.assertEqual(res[0].id, asked[0][2])
        self.assertIn("no shell today", res[1].content[0].text)
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "a.txt")))

    def test_answer_permission_by_hand(self):
        c = self.client(APPROVAL_SCRIPT, "--approve", "--approval-timeout", "1m")
        stream = c.prompt("go")
        answered = 0
        events = []
        for ev in stream:
            events.append(ev)
            if isinstance(ev, z.PermissionRequestEvent):
                self.assertEqual(ev.timeout_ms, 60000)
                c.answer_permission(ev.request_id, "allow_always" if ev.tool == "write" else "reject")
                answered += 1
                with self.assertRaises(z.ZotError) as cm:
                    c.answer_permission(ev.request_id, "allow_once")
                self.assertEqual(cm.exception.code, "unknown_request")
        self.assertEqual(answered, 2)
        self.assertEqual([r.is_error for r in results(events)], [False, True])
        with self.assertRaises(z.ZotError) as cm:
            c.answer_permission("perm-99", "allow_once")
        self.assertEqual(cm.exception.code, "unknown_request")

    def test_allow_always_saved_as_a_rule(self):
        # The answer keeps the request's rule for this folder in the zot
        # home's config.json; the next zot in the folder runs the call
        # without asking.
        script = {"turns": [{"steps": [{"tool_calls": [{"name": "bash", "args": {"command": "echo saved"}}]}, {"text": "done"}]}]}
        c = self.client(script, "--approve")
        events = []
        for ev in c.prompt("go"):
            events.append(ev)
            if isinstance(ev, z.PermissionRequestEvent):
                self.assertEqual(ev.rule, "bash(echo saved *)")
                c.answer_permission(ev.request_id, "allow_always", save="project")
        self.assertEqual([r.is_error for r in results(events)], [False])
        c2 = self.client(script, "--approve")
        events = c2.prompt("go").collect()
        self.assertFalse([e for e in events if isinstance(e, z.PermissionRequestEvent)])
        self.assertEqual([r.is_error for r in results(events)], [False])

    def test_a_failing_callback_rejects(self):
        def broken(ev):
            raise RuntimeError("no UI")

        self.stderr = io.StringIO()
        c = z.Client(
            self.zot_flags(APPROVAL_SCRIPT, "--approve"),
            binary=ZOT,
            env={"ZOTCORE_RPC_TOKEN": None},
            cwd=self.tmp,
            stderr=self.stderr,
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
            on_permission_request=broken,
        )
        self.addCleanup(self._shut, c)
        res = results(c.prompt("go").collect())
        self.assertEqual([r.is_error for r in res], [True, True])
        self.assertIn("no UI", res[0].content[0].text)

    def test_hello_versions_and_lenient_commands(self):
        c = self.client()
        hello = c.hello(protocol_version=99, client={"name": "test-suite", "version": "0"})
        self.assertEqual(hello.protocol_version, 1)
        self.assertTrue(hello.version)
        # Python's None as JSON null means absent; unknown members are
        # ignored (and named once on stderr).
        resp = c.request({"type": "prompt", "message": "hi", "images": None, "x_future": 1})
        self.assertTrue(resp.success, resp.error)
        resp = c.request({"type": "abort", "all": None})
        self.assertTrue(resp.success, resp.error)
        deadline = time.monotonic() + EVENT_TIMEOUT
        while c.get_state().busy and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(c.set_model("some-model-the-catalog-lacks").model, "some-model-the-catalog-lacks")
        ids = [m.id for m in c.get_models().models]
        self.assertIn("some-model-the-catalog-lacks", ids)
        with self.assertRaises(z.ZotError) as cm:
            c.set_model("")
        self.assertEqual(cm.exception.code, "unknown_model")


@requires_zot
class AsyncPermissionTest(ZotTestCase, unittest.IsolatedAsyncioTestCase):
    async def test_async_callback(self):
        asked = []

        async def decide(ev):
            await asyncio.sleep(0)
            asked.append(ev.tool)
            return "allow_once" if ev.tool == "write" else ("reject", "not here")

        async with AsyncClient(
            self.zot_flags(APPROVAL_SCRIPT, "--approve"),
            binary=ZOT,
            env={"ZOTCORE_RPC_TOKEN": None},
            cwd=self.tmp,
            stderr=io.StringIO(),
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
            on_permission_request=decide,
        ) as c:
            events = await c.prompt("go").collect()
            hello = await c.hello(protocol_version=1, client={"name": "aio-test"})
            self.assertEqual(hello.protocol_version, 1)
            with self.assertRaises(z.ZotError) as cm:
                await c.answer_permission("perm-1", "allow_once")
            self.assertEqual(cm.exception.code, "unknown_request")
        self.assertEqual(asked, ["write", "bash"])
        self.assertEqual([r.is_error for r in results(events)], [False, True])
        self.assertIn("not here", results(events)[1].content[0].text)


if __name__ == "__main__":
    unittest.main()
