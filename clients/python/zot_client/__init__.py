"""Client for zot's RPC protocol (``zot rpc``).

The protocol types are generated from zot's JSON Schema
(schema/rpc/*.json) into zot_client.types and re-exported here, together
with the thread-based Client (zot_client.client), the asyncio AsyncClient
(zot_client.aio) and their exceptions (zot_client.errors).
"""

from .types import *  # noqa: F401,F403
from .types import __all__ as _types_all
from .aio import AsyncClient, AsyncPromptStream
from .client import Client, PermissionAnswer, PromptStream
from ._tools import Tool
from .errors import ProtocolError, ZotClosedError, ZotError

__all__ = list(_types_all) + [
    "AsyncClient",
    "AsyncPromptStream",
    "Client",
    "PermissionAnswer",
    "PromptStream",
    "Tool",
    "ProtocolError",
    "ZotClosedError",
    "ZotError",
]
