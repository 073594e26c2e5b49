"""The client methods for the session's MCP servers (docs/mcp.md): list,
add and remove them. Mixed into Client and AsyncClient.

None of them is refused while a prompt runs: servers start in the
background, and changes reach the model at its next call. Notices about
the servers (a late start, a crash, a restart) arrive as ``ext_notify``
events whose ``source`` is ``mcp:<server>``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Union

from .types import MCPServer, MCPServersResult

ServerSpec = Union[MCPServer, Mapping[str, Any]]


def _servers(servers: Iterable[ServerSpec]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for s in servers:
        out.append(s.to_dict() if isinstance(s, MCPServer) else dict(s))
    return out


class MCPMethods:
    """MCP commands of Client."""

    def mcp_list(self) -> MCPServersResult:
        """Lists the MCP servers, sorted by name, with their status and tools."""
        return self._call({"type": "mcp_list"})  # type: ignore[attr-defined]

    def mcp_add(self, servers: Iterable[ServerSpec]) -> MCPServersResult:
        """Adds MCP servers (MCPServer values or dicts of the mcpServers
        file shape plus ``name``); one with a present name replaces it.
        Raises ZotError with code ``invalid_params`` for an unusable one."""
        return self._call({"type": "mcp_add", "servers": _servers(servers)})  # type: ignore[attr-defined]

    def mcp_remove(self, name: str) -> MCPServersResult:
        """Removes an MCP server; ZotError with code ``not_found`` when
        there is none of that name."""
        return self._call({"type": "mcp_remove", "name": name})  # type: ignore[attr-defined]


class AsyncMCPMethods:
    """MCP commands of AsyncClient; see MCPMethods."""

    async def mcp_list(self) -> MCPServersResult:
        """Lists the MCP servers, sorted by name, with their status and tools."""
        return await self._call({"type": "mcp_list"})  # type: ignore[attr-defined]

    async def mcp_add(self, servers: Iterable[ServerSpec]) -> MCPServersResult:
        """Adds MCP servers; see MCPMethods.mcp_add."""
        return await self._call({"type": "mcp_add", "servers": _servers(servers)})  # type: ignore[attr-defined]

    async def mcp_remove(self, name: str) -> MCPServersResult:
        """Removes an MCP server; see MCPMethods.mcp_remove."""
        return await self._call({"type": "mcp_remove", "name": name})  # type: ignore[attr-defined]
