// The MCP methods of ZotClient against the real `zot rpc`, with the
// minimal Python MCP server of the Python client's tests.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { test } from "node:test";

import { clientDir, guard, openClient } from "./helpers.mjs";

const server = resolve(clientDir, "../python/tests/mcp_server.py");

test("mcp_add, mcp_list, mcp_remove", async (t) => {
  const client = await openClient(t, { args: ["--strict-mcp-config"] });
  const added = await client.mcpAdd([{ name: "py", command: "python3", args: [server] }]);
  assert.deepEqual(added.servers.map((s) => [s.name, s.transport]), [["py", "stdio"]]);
  await guard(
    (async () => {
      while ((await client.mcpList()).servers[0].status !== "ready") await new Promise((r) => setTimeout(r, 10));
    })(),
    "the server to be ready",
  );
  const { servers } = await client.mcpList();
  assert.deepEqual(servers[0].tools, ["mcp__py__echo"]);
  assert.equal((await client.getState()).mcp_servers, 1);
  assert.deepEqual((await client.mcpRemove("py")).servers, []);
  await assert.rejects(client.mcpRemove("py"), (err) => err.code === "not_found");
  await assert.rejects(client.mcpAdd([{ name: "nothing" }]), (err) => err.code === "invalid_params");
});
