"""Runs examples/aio.py (the asyncio client) as a program against the real
`zot rpc`."""

import os
import subprocess
import sys

from harness import CLIENT_DIR, ZOT, ZotTestCase, requires_zot

AIO_PY = str(CLIENT_DIR / "examples" / "aio.py")


class AioExampleTest(ZotTestCase):
    @requires_zot
    def test_the_tool_runs_and_the_steer_lands(self):
        # The scripted provider counts each user message as a prompt: the
        # prompt picks the first turn (the model talks for a while, then
        # calls the tool), the steer, sent meanwhile, the second, which
        # answers it.
        script = {"turns": [
            {"steps": [
                {"text": "let me look", "chunk": 2, "delay_ms": 100,
                 "tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}]},
                {"text": "not reached"},
            ]},
            {"steps": [{"echo": True}]},
        ]}
        p = subprocess.run(
            [sys.executable, AIO_PY, *self.zot_flags(script), "weather in Oslo?", "in Celsius please"],
            capture_output=True, text=True, env={**os.environ, "ZOT_BIN": ZOT}, cwd=self.tmp, timeout=60,
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("[weather] fog in Oslo", p.stderr)
        self.assertIn("[steer] in Celsius please", p.stderr)
        self.assertEqual(p.stdout, "You said: in Celsius please\n")
