"""A zot that refuses to start (here: a real provider without its key)
explains why on stderr and exits 1; the clients' errors carry that reason,
not only the exit status, wherever zot's stderr is sent."""

import asyncio
import io
import os
import subprocess
import sys
import unittest

from harness import RESPONSE_TIMEOUT, ZOT, ZotTestCase, requires_zot

import zot_client as z

REASON = "no API key for anthropic: set ANTHROPIC_API_KEY"


class StartupFailureTest(ZotTestCase):
    def no_key_env(self):
        """The environment overlay of a zot with no key anywhere: no key
        variables, and an empty zot home (so no auth file)."""
        home = os.path.join(self.tmp, "home")
        os.makedirs(home, exist_ok=True)
        env = {k: None for k in os.environ if k.endswith("_API_KEY")}
        env.update(ANTHROPIC_API_KEY=None, OPENAI_API_KEY=None, GEMINI_API_KEY=None, ZOTCORE_RPC_TOKEN=None, ZOT_HOME=home)
        return env

    def args(self):
        return ["--provider", "anthropic", "--cwd", self.tmp]

    @requires_zot
    def test_client_error_says_why(self):
        for name, sink in (("a writer", io.StringIO()), ("DEVNULL", subprocess.DEVNULL), ("default", None)):
            with self.subTest(stderr=name):
                ours, sys.stderr = sys.stderr, io.StringIO()  # where the default sends it
                try:
                    c = z.Client(self.args(), binary=ZOT, env=self.no_key_env(), stderr=sink, timeout=RESPONSE_TIMEOUT)
                    with self.assertRaises(z.ZotClosedError) as cm:
                        c.prompt("hello")
                    c.close()
                finally:
                    ours, sys.stderr = sys.stderr, ours
                if sink is None:
                    self.assertIn(REASON, ours.getvalue(), "stderr goes to sys.stderr by default")
                e = cm.exception
                self.assertIn(REASON, str(e))
                self.assertIn("exit status 1", str(e))
                self.assertEqual(e.returncode, 1)
                self.assertIn(REASON, e.stderr)
                if isinstance(sink, io.StringIO):
                    self.assertIn(REASON, sink.getvalue(), "stderr still reaches the sink")

    @requires_zot
    def test_async_client_error_says_why(self):
        async def go():
            async with z.AsyncClient(
                self.args(), binary=ZOT, env=self.no_key_env(), stderr=subprocess.DEVNULL, timeout=RESPONSE_TIMEOUT
            ) as c:
                with self.assertRaises(z.ZotClosedError) as cm:
                    await c.ping()
                return cm.exception

        e = asyncio.run(go())
        self.assertIn(REASON, str(e))
        self.assertEqual(e.returncode, 1)


if __name__ == "__main__":
    unittest.main()
