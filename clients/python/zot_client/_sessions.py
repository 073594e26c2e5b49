"""The client methods for the stored sessions (docs/sessions.md): list,
load and fork them. Mixed into Client and AsyncClient.

``zot rpc`` keeps its transcript in memory until asked: started with
``--continue`` or ``--session``, or told to by ``load_session`` or
``fork_session``; ``list_sessions`` only reads the zot home's store.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .types import ForkSessionResult, LoadSessionResult, SessionInfo


def _fork_cmd(session_id: Optional[str], at_index: Optional[int], at_message_id: Optional[str], load: bool) -> Dict[str, Any]:
    cmd: Dict[str, Any] = {"type": "fork_session", "load": load}
    if session_id is not None:
        cmd["session_id"] = session_id
    if at_index is not None:
        cmd["at_index"] = at_index
    if at_message_id is not None:
        cmd["at_message_id"] = at_message_id
    return cmd


def _list_cmd(cwd: Optional[str]) -> Dict[str, Any]:
    return {"type": "list_sessions"} if cwd is None else {"type": "list_sessions", "cwd": cwd}


class SessionMethods:
    """Session-store commands of Client."""

    def list_sessions(self, cwd: Optional[str] = None) -> List[SessionInfo]:
        """The stored sessions, newest first; ``cwd`` keeps those of one
        working directory. This process's own is marked ``current``."""
        return self._call(_list_cmd(cwd)).sessions  # type: ignore[attr-defined]

    def load_session(self, session_id: str) -> SessionInfo:
        """Makes a stored session this process's: its transcript replaces
        the one in memory, later messages go to its file. ZotError with
        code ``busy``, ``not_found`` or ``session_locked``."""
        res: LoadSessionResult = self._call({"type": "load_session", "session_id": session_id})  # type: ignore[attr-defined]
        return res.session

    def fork_session(
        self,
        session_id: Optional[str] = None,
        at_index: Optional[int] = None,
        at_message_id: Optional[str] = None,
        load: bool = True,
    ) -> ForkSessionResult:
        """Forks a stored session (default: this process's) before one of
        its user prompts (default: the last), and loads the fork unless
        ``load`` is False. The result's ``message`` is the prompt left out,
        to edit and send again. ZotError ``not_found`` for no such session
        or prompt."""
        return self._call(_fork_cmd(session_id, at_index, at_message_id, load))  # type: ignore[attr-defined]


class AsyncSessionMethods:
    """Session-store commands of AsyncClient; see SessionMethods."""

    async def list_sessions(self, cwd: Optional[str] = None) -> List[SessionInfo]:
        """The stored sessions, newest first; see SessionMethods.list_sessions."""
        return (await self._call(_list_cmd(cwd))).sessions  # type: ignore[attr-defined]

    async def load_session(self, session_id: str) -> SessionInfo:
        """Makes a stored session this process's; see SessionMethods.load_session."""
        res: LoadSessionResult = await self._call({"type": "load_session", "session_id": session_id})  # type: ignore[attr-defined]
        return res.session

    async def fork_session(
        self,
        session_id: Optional[str] = None,
        at_index: Optional[int] = None,
        at_message_id: Optional[str] = None,
        load: bool = True,
    ) -> ForkSessionResult:
        """Forks a stored session; see SessionMethods.fork_session."""
        return await self._call(_fork_cmd(session_id, at_index, at_message_id, load))  # type: ignore[attr-defined]
