"""Client for zot's RPC protocol (``zot rpc``).

The protocol types are generated from zot's JSON Schema (schema/*.json) into
zot_client.types and re-exported here.
"""

from .types import *  # noqa: F401,F403
from .types import __all__ as _types_all

__all__ = list(_types_all)
