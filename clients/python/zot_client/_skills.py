"""The client methods for the session's skills (docs/skills.md): folders
holding a SKILL.md whose names and descriptions the model sees, and whose
instructions and files it loads with the skill tool. Mixed into Client and
AsyncClient.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .types import GetSkillResult, ListAgentsResult, ListSkillsResult


class SkillMethods:
    """Skill commands of Client."""

    def list_skills(self) -> ListSkillsResult:
        """The session's skills: ``skills`` offered (by name), ``shadowed``
        by one of the same name found earlier, ``problems`` (those that
        could not be read, each a one-line message), and ``tool`` (whether
        the model may load them)."""
        return self._call({"type": "list_skills"})  # type: ignore[attr-defined]

    def list_agents(self) -> ListAgentsResult:
        """The agent profiles the session's task tool offers (docs/agents.md):
        ``agents`` offered, ``shadowed`` by one of the same name found
        earlier, ``problems`` (files that could not be used), ``tool``."""
        return self._call({"type": "list_agents"})  # type: ignore[attr-defined]

    def get_skill(self, name: str, file: Optional[str] = None) -> GetSkillResult:
        """A skill's instructions, or a file or folder inside its folder
        (``file``, relative to it), as the skill tool gives them. ZotError
        ``not_found`` for a skill or file there is not, ``invalid_params``
        for a path that leads out of the skill's folder."""
        cmd: Dict[str, Any] = {"type": "get_skill", "name": name}
        if file is not None:
            cmd["file"] = file
        return self._call(cmd)  # type: ignore[attr-defined]


class AsyncSkillMethods:
    """Skill commands of AsyncClient; see SkillMethods."""

    async def list_skills(self) -> ListSkillsResult:
        """The session's skills; see SkillMethods.list_skills."""
        return await self._call({"type": "list_skills"})  # type: ignore[attr-defined]

    async def list_agents(self) -> ListAgentsResult:
        """The session's agent profiles; see SkillMethods.list_agents."""
        return await self._call({"type": "list_agents"})  # type: ignore[attr-defined]

    async def get_skill(self, name: str, file: Optional[str] = None) -> GetSkillResult:
        """A skill's instructions or file; see SkillMethods.get_skill."""
        cmd: Dict[str, Any] = {"type": "get_skill", "name": name}
        if file is not None:
            cmd["file"] = file
        return await self._call(cmd)  # type: ignore[attr-defined]
