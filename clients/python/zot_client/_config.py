"""The client methods for the session's prompt defaults and what zot
supports (docs/rpc.md, Session defaults). Mixed into Client and
AsyncClient.

The defaults (model, reasoning, max_steps, max_cost_usd) belong to the
one session and live as long as it; they are not config.json.
"""

from __future__ import annotations

from typing import Any, Dict

from .types import CapabilitiesResult, SessionDefaults


class ConfigMethods:
    """Session-defaults commands of Client."""

    def get_config(self) -> SessionDefaults:
        """The session's prompt defaults."""
        return self._call({"type": "get_config"}).config  # type: ignore[attr-defined]

    def set_config(self, config: Dict[str, Any]) -> SessionDefaults:
        """Replaces the defaults with config whole (``model`` and
        ``max_steps`` required); returns them. ZotError ``invalid_params``,
        ``unknown_model`` or ``busy``, setting nothing."""
        return self._call({"type": "set_config", "config": config}).config  # type: ignore[attr-defined]

    def patch_config(self, patch: Dict[str, Any]) -> SessionDefaults:
        """Merges patch into the defaults (RFC 7396: None takes one back
        to zot's); returns them."""
        return self._call({"type": "patch_config", "patch": patch}).config  # type: ignore[attr-defined]

    def get_capabilities(self) -> CapabilitiesResult:
        """What this zot and this session support: providers, doors,
        features and limits."""
        return self._call({"type": "get_capabilities"})  # type: ignore[attr-defined]


class AsyncConfigMethods:
    """Session-defaults commands of AsyncClient; see ConfigMethods."""

    async def get_config(self) -> SessionDefaults:
        """The session's prompt defaults; see ConfigMethods.get_config."""
        return (await self._call({"type": "get_config"})).config  # type: ignore[attr-defined]

    async def set_config(self, config: Dict[str, Any]) -> SessionDefaults:
        """Replaces the defaults; see ConfigMethods.set_config."""
        return (await self._call({"type": "set_config", "config": config})).config  # type: ignore[attr-defined]

    async def patch_config(self, patch: Dict[str, Any]) -> SessionDefaults:
        """Merges patch into the defaults; see ConfigMethods.patch_config."""
        return (await self._call({"type": "patch_config", "patch": patch})).config  # type: ignore[attr-defined]

    async def get_capabilities(self) -> CapabilitiesResult:
        """What zot supports; see ConfigMethods.get_capabilities."""
        return await self._call({"type": "get_capabilities"})  # type: ignore[attr-defined]
