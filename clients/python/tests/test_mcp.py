"""Tests of the MCP methods of Client and AsyncClient against the real
`zot rpc`, with a minimal MCP server written in Python."""

import asyncio
import sys
import unittest

from harness import EVENT_TIMEOUT, HERE, RESPONSE_TIMEOUT, ZOT, ZotTestCase, requires_zot

import zot_client as z

SERVER = str((HERE / "mcp_server.py").resolve())

ECHO_TOOL_SCRIPT = {"turns": [{"steps": [
    {"tool_calls": [{"id": "m1", "name": "mcp__py__echo", "args": {"text": "hi"}}]},
    {"text": "done"},
]}]}


@requires_zot
class MCPMethodsTest(ZotTestCase):
    def test_add_list_use_remove(self):
        c = self.client(ECHO_TOOL_SCRIPT, "--strict-mcp-config")
        added = c.mcp_add([z.MCPServer(name="py", command=sys.executable, args=[SERVER])])
        self.assertEqual([s.name for s in added.servers], ["py"])
        self.assertIsInstance(added.servers[0], z.MCPServerInfo)
        stream = c.prompt("use it")  # the prompt waits for the server to start
        results = [e for e in stream if isinstance(e, z.ToolResultEvent)]
        self.assertEqual(results[0].content[0].text, "py echo: hi")
        listed = c.mcp_list().servers
        self.assertEqual((listed[0].status, listed[0].tools, listed[0].server_name), ("ready", ["mcp__py__echo"], "py-echo"))
        self.assertEqual(c.get_state().mcp_servers, 1)
        self.assertEqual(c.mcp_remove("py").servers, [])
        with self.assertRaises(z.ZotError) as err:
            c.mcp_remove("py")
        self.assertEqual(err.exception.code, "not_found")
        with self.assertRaises(z.ZotError) as err:
            c.mcp_add([{"name": "nothing"}])
        self.assertEqual(err.exception.code, "invalid_params")

    def test_async(self):
        async def run():
            c = z.AsyncClient(
                self.zot_flags(None, "--strict-mcp-config"), binary=ZOT, env={"ZOTCORE_RPC_TOKEN": None}, cwd=self.tmp,
                timeout=RESPONSE_TIMEOUT, event_timeout=EVENT_TIMEOUT,
            )
            async with c:
                res = await c.mcp_add([{"name": "py", "command": sys.executable, "args": [SERVER]}])
                self.assertEqual(res.servers[0].transport, "stdio")
                self.assertEqual([s.name for s in (await c.mcp_list()).servers], ["py"])
                self.assertEqual((await c.mcp_remove("py")).servers, [])

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()
