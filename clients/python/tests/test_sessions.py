"""Tests of the session-store methods of Client and AsyncClient against
the real `zot rpc`: a session kept with --continue is listed, forked
before its last prompt (the fork loaded) and loaded back."""

import asyncio
import os
import tempfile
import unittest

from harness import ECHO_SCRIPT, EVENT_TIMEOUT, RESPONSE_TIMEOUT, ZOT, ZotTestCase, requires_zot

import zot_client as z


@requires_zot
class SessionMethodsTest(ZotTestCase):
    def setUp(self) -> None:
        super().setUp()
        home = tempfile.TemporaryDirectory(prefix="zot-client-test-home-")
        self.addCleanup(home.cleanup)
        self.home = home.name

    def test_list_fork_load(self):
        c = self.client(ECHO_SCRIPT, "--continue", env={"ZOT_HOME": self.home})
        for text in ("one", "two"):
            list(c.prompt(text))
        listed = c.list_sessions()
        self.assertEqual(len(listed), 1)
        self.assertIsInstance(listed[0], z.SessionInfo)
        self.assertTrue(listed[0].current)
        self.assertEqual((listed[0].title, listed[0].message_count), ("one", 4))
        parent = listed[0].id

        fork = c.fork_session()
        self.assertTrue(fork.loaded)
        self.assertEqual((fork.at_index, fork.session.parent_id, fork.session.message_count), (2, parent, 2))
        self.assertEqual(fork.message.content[0].text, "two")
        self.assertEqual(c.get_state().message_count, 2)
        other = c.fork_session(session_id=parent, at_index=0, load=False)
        self.assertFalse(other.loaded)
        self.assertEqual(other.session.message_count, 0)

        self.assertEqual(c.load_session(parent).id, parent)
        self.assertEqual(c.get_state().message_count, 4)
        self.assertEqual(len(c.list_sessions()), 3)
        self.assertEqual(c.list_sessions(cwd=os.path.join(self.tmp, "elsewhere")), [])
        with self.assertRaises(z.ZotError) as err:
            c.load_session("20200101T000000Z-0000000000000000")
        self.assertEqual(err.exception.code, "not_found")
        with self.assertRaises(z.ZotError) as err:
            c.fork_session(at_index=1)
        self.assertEqual(err.exception.code, "not_found")

    def test_async(self):
        async def run():
            c = z.AsyncClient(
                self.zot_flags(ECHO_SCRIPT), binary=ZOT, env={"ZOTCORE_RPC_TOKEN": None, "ZOT_HOME": self.home},
                cwd=self.tmp, timeout=RESPONSE_TIMEOUT, event_timeout=EVENT_TIMEOUT,
            )
            async with c:
                self.assertEqual(await c.list_sessions(), [])
                with self.assertRaises(z.ZotError) as err:
                    await c.fork_session()
                self.assertEqual(err.exception.code, "invalid_params")

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()
