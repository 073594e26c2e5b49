#!/usr/bin/env python3
"""A Python function as a tool the model calls: tool.py [zot flags...] "message"."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from zot_client import Client, TextDeltaEvent, ToolResultEvent  # noqa: E402

with Client(sys.argv[1:-1]) as zot:

    @zot.tool(read_only=True)
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"fog and 12 degrees in {city}"

    for ev in zot.prompt(sys.argv[-1]):
        if isinstance(ev, ToolResultEvent):
            print(f"[weather] {ev.content[0].text}", file=sys.stderr)
        elif isinstance(ev, TextDeltaEvent):
            print(ev.delta, end="", flush=True)
    print()
