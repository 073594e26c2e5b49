"""Tests of the extension methods of Client and AsyncClient against the
real `zot rpc`, with the Python test extension of internal/exthost."""

import asyncio
import io
import json
import os
import sys
import threading
import time
import unittest

from harness import EVENT_TIMEOUT, HERE, RESPONSE_TIMEOUT, ZOT, ZotTestCase, event_types, requires_zot

import zot_client as z

EXT_SCRIPT = (HERE / ".." / ".." / ".." / "internal" / "exthost" / "testdata" / "py" / "ext.py").resolve()


class ExtensionTestCase(ZotTestCase):
    def extension(self, name: str = "py", mode: str = "ok") -> str:
        """Writes the test extension's folder and returns it."""
        folder = os.path.join(self.tmp, "exts", name)
        os.makedirs(folder)
        with open(os.path.join(folder, "extension.json"), "w", encoding="utf-8") as f:
            json.dump({"name": name, "exec": sys.executable, "args": [str(EXT_SCRIPT), mode, name]}, f)
        return folder

    def flags(self) -> list:
        return ["--provider", "scripted", "--cwd", self.tmp, "--ext", self.extension()]


@requires_zot
class ExtensionMethodsTest(ExtensionTestCase):
    def test_commands_panels_and_reload(self):
        pushed = []
        lock = threading.Lock()

        def unrouted(ev):
            with lock:
                pushed.append(ev)

        c = z.Client(
            self.flags(), binary=ZOT, env={"ZOTCORE_RPC_TOKEN": None}, cwd=self.tmp, stderr=io.StringIO(),
            timeout=RESPONSE_TIMEOUT, event_timeout=EVENT_TIMEOUT, on_unrouted=unrouted,
        )
        self.addCleanup(self._shut, c)

        result, stream = c.run_command("hello-py", "display hi")
        self.assertIsNone(stream)
        self.assertEqual((result.extension, result.action, result.text), ("py", "display", "hi"))

        cmds = c.get_commands().commands
        self.assertEqual([(x.name, x.extension) for x in cmds if x.source == "extension"], [("hello-py", "py")])
        self.assertEqual([x.name for x in cmds if x.source == "builtin"], ["help", "compact", "clear", "model", "mode", "reload", "undo", "jail", "unjail", "skills", "agents"])
        exts = c.get_extensions().extensions
        self.assertEqual([(e.name, e.state) for e in exts], [("py", "ready")])

        result, _ = c.run_command("hello-py", "panel")
        self.assertEqual(result.panel.id, "p1")
        c.panel_key("p1", "rune", "k")
        deadline = time.time() + EVENT_TIMEOUT
        while True:
            with lock:
                renders = [e for e in pushed if isinstance(e, z.PanelRenderEvent)]
            if renders:
                break
            self.assertLess(time.time(), deadline, f"no panel_render: {event_types(pushed)}")
            time.sleep(0.01)
        self.assertEqual(renders[0].lines, ["key rune k"])
        c.close_panel("p1")
        with self.assertRaises(z.ZotError) as cm:
            c.panel_key("p1", "down")
        self.assertEqual(cm.exception.code, "not_found")
        with self.assertRaises(z.ZotError) as cm:
            c.run_command("nope")
        self.assertEqual(cm.exception.code, "not_found")

        result, stream = c.run_command("hello-py", "tell me")
        self.assertEqual(result.action, "prompt")
        self.assertTrue(stream.started)
        events = stream.collect()
        self.assertEqual(events[-1].TYPE, "done")
        self.assertEqual(events[0].prompt_id, stream.id)
        # A command's prompt is cancelled by its id as any prompt is: it
        # has ended, so it is left alone.
        self.assertEqual(stream.cancel(), z.AbortResult(aborted=False, dropped=0))

        exts = c.reload_extensions().extensions
        self.assertEqual([e.state for e in exts], ["ready"])


@requires_zot
class AsyncExtensionMethodsTest(ExtensionTestCase):
    def test_run_command(self):
        async def main():
            async with z.AsyncClient(
                self.flags(), binary=ZOT, env={"ZOTCORE_RPC_TOKEN": None}, cwd=self.tmp, stderr=io.StringIO(),
                timeout=RESPONSE_TIMEOUT,
            ) as c:
                result, stream = await c.run_command("hello-py", "insert x")
                self.assertEqual((result.action, result.text), ("insert", "x"))
                self.assertIsNone(stream)
                self.assertEqual(len([x for x in (await c.get_commands()).commands if x.source == "extension"]), 1)
                result, stream = await c.run_command("hello-py", "go")
                events = await stream.collect()
                self.assertEqual(events[-1].TYPE, "done")
                self.assertEqual([e.state for e in (await c.reload_extensions()).extensions], ["ready"])

        asyncio.run(main())

    def test_run_command_runs_once_and_done_means_idle(self):
        # Iterating the stream run_command returns once sent the command a
        # second time: the extension ran it twice, a second prompt ran
        # behind the first, and a reload after the first one's done was
        # refused as busy now and then. Many rounds make that race show;
        # the transcript says deterministically how many prompts ran.
        rounds = 20

        async def main():
            async with z.AsyncClient(
                self.flags(), binary=ZOT, env={"ZOTCORE_RPC_TOKEN": None}, cwd=self.tmp, stderr=io.StringIO(),
                timeout=RESPONSE_TIMEOUT,
            ) as c:
                for i in range(rounds):
                    result, stream = await c.run_command("hello-py", "round %d" % i)
                    self.assertEqual(result.action, "prompt")
                    events = await stream.collect()
                    self.assertEqual(events[-1].TYPE, "done")
                    self.assertFalse((await c.get_state()).busy, f"busy after done in round {i}")
                    exts = (await c.reload_extensions()).extensions
                    self.assertEqual([e.state for e in exts], ["ready"], f"round {i}")
                users = [m for m in (await c.get_messages()).messages if m.role == "user"]
                self.assertEqual(len(users), rounds)

        asyncio.run(main())


if __name__ == "__main__":
    unittest.main()
