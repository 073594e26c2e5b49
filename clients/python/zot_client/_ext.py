"""The client methods for zot's extensions (docs/extensions.md): their
slash commands, panels and reloading. Mixed into Client and AsyncClient.

What extensions push on their own (``ext_notify``, ``panel_render``,
``panel_close``) belongs to no stream: it reaches ``on_unrouted``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, TypeVar

from .types import CommandsResult, ExtensionsResult, RunCommandResult, StartResult

if TYPE_CHECKING:  # pragma: no cover
    from .aio import AsyncPromptStream
    from .client import PromptStream


def _panel_key(panel_id: str, key: str, text: Optional[str]) -> Dict[str, Any]:
    cmd: Dict[str, Any] = {"type": "panel_key", "panel_id": panel_id, "key": key}
    if text is not None:
        cmd["text"] = text
    return cmd


_S = TypeVar("_S")


def _command_result(router: Any, cid: int, resp: Any, stream: _S) -> Tuple[RunCommandResult, Optional[_S]]:
    """run_command's answer from its response: ZotError when it failed;
    for action ``"prompt"`` (and ``"compact"``) the result with stream, told how its work
    was started; for the other actions the result alone, the stream's id
    forgotten."""
    from .client import _raise_failure

    if not resp.success:
        router.forget(cid)
        _raise_failure(resp)
    result: RunCommandResult = RunCommandResult.from_dict(resp.data or {})
    if result.action not in ("prompt", "compact"):
        router.forget(cid)
        return result, None
    stream.start = StartResult(  # type: ignore[attr-defined]
        started=bool(result.started), queued=result.queued, position=result.position
    )
    return result, stream


class ExtensionMethods:
    """Extension commands of Client."""

    def get_commands(self) -> CommandsResult:
        """Lists the slash commands: zot's own, then the running extensions'."""
        return self._call({"type": "get_commands"})  # type: ignore[attr-defined]

    def get_extensions(self) -> ExtensionsResult:
        """Lists the extensions zot found, in load order, with their state."""
        return self._call({"type": "get_extensions"})  # type: ignore[attr-defined]

    def run_command(self, name: str, args: str = "") -> Tuple[RunCommandResult, Optional["PromptStream"]]:
        """Runs an extension's slash command (name without the slash, args
        the rest of the line). Returns the result and, for action
        ``"prompt"``, the stream of the prompt zot submitted (None for the
        other actions, whose text or panel is in the result). ZotError
        ``not_found`` for a command neither zot nor an extension offers, ``extension_error``
        when the extension fails to answer."""
        from .client import PromptStream

        cid = next(self._ids)  # type: ignore[attr-defined]
        stream = PromptStream(cid, "run_command", self._event_timeout, self.abort)  # type: ignore[attr-defined]
        resp = self._send({"type": "run_command", "name": name, "args": args}, stream, cid)  # type: ignore[attr-defined]
        return _command_result(self._router, cid, resp, stream)  # type: ignore[attr-defined]

    def panel_key(self, panel_id: str, key: str, text: Optional[str] = None) -> None:
        """Sends a key (``"up"``, ``"enter"``, ``"esc"``, ``"rune"`` with
        text, ...) to an open extension panel; ZotError ``not_found`` when
        no panel of that id is open."""
        self._call(_panel_key(panel_id, key, text))  # type: ignore[attr-defined]

    def close_panel(self, panel_id: str) -> None:
        """Closes an open extension panel, as a user would."""
        self._call({"type": "close_panel", "panel_id": panel_id})  # type: ignore[attr-defined]

    def reload_extensions(self) -> ExtensionsResult:
        """Stops the extensions, finds them again and starts them; ZotError
        ``busy`` while a prompt or compact runs or is queued."""
        return self._call({"type": "reload_extensions"})  # type: ignore[attr-defined]


class AsyncExtensionMethods:
    """Extension commands of AsyncClient; see ExtensionMethods."""

    async def get_commands(self) -> CommandsResult:
        """Lists the slash commands: zot's own, then the running extensions'."""
        return await self._call({"type": "get_commands"})  # type: ignore[attr-defined]

    async def get_extensions(self) -> ExtensionsResult:
        """Lists the extensions zot found, in load order, with their state."""
        return await self._call({"type": "get_extensions"})  # type: ignore[attr-defined]

    async def run_command(self, name: str, args: str = "") -> Tuple[RunCommandResult, Optional["AsyncPromptStream"]]:
        """Runs an extension's slash command; see Client.run_command."""
        from .aio import AsyncPromptStream

        cmd = {"type": "run_command", "name": name, "args": args}
        cid = next(self._ids)  # type: ignore[attr-defined]
        stream = AsyncPromptStream(self, cmd, cid)  # type: ignore[arg-type]
        # The command is sent here, once: iterating the stream must not
        # send it again (which would run the command twice).
        sent: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        sent.set_result(None)
        stream._sent = sent  # type: ignore[assignment]
        resp = await self._send(dict(cmd), stream, cid)  # type: ignore[attr-defined]
        return _command_result(self._router, cid, resp, stream)  # type: ignore[attr-defined]

    async def panel_key(self, panel_id: str, key: str, text: Optional[str] = None) -> None:
        """Sends a key to an open extension panel."""
        await self._call(_panel_key(panel_id, key, text))  # type: ignore[attr-defined]

    async def close_panel(self, panel_id: str) -> None:
        """Closes an open extension panel, as a user would."""
        await self._call({"type": "close_panel", "panel_id": panel_id})  # type: ignore[attr-defined]

    async def reload_extensions(self) -> ExtensionsResult:
        """Stops the extensions, finds them again and starts them."""
        return await self._call({"type": "reload_extensions"})  # type: ignore[attr-defined]
