"""Write zot extensions in Python: a tool, a command, an intercept or a
panel in a few lines, with the extension protocol done for you.

::

    #!/usr/bin/env python3
    from zot_ext import Extension

    ext = Extension("shout", "1.0.0")  # the manifest's name

    @ext.tool(schema={"type": "object", "properties": {"text": {"type": "string"}}})
    def shout(args):
        "Upper-case the text."
        return args["text"].upper()

    ext.run()

The protocol's frames are generated from zot's JSON Schema
(schema/ext/*.json) into zot_ext.types and re-exported here, with the
Extension (zot_ext._ext) and what handlers return.
"""

from .types import *  # noqa: F401,F403
from .types import __all__ as _types_all
from ._ext import (
    Block,
    CommandError,
    Display,
    Extension,
    Insert,
    Noop,
    NotRunningError,
    Prompt,
    Request,
    Rewrite,
    ToolError,
    ToolResult,
    image,
)

__all__ = list(_types_all) + [
    "Block",
    "CommandError",
    "Display",
    "Extension",
    "Insert",
    "Noop",
    "NotRunningError",
    "Prompt",
    "Request",
    "Rewrite",
    "ToolError",
    "ToolResult",
    "image",
]
