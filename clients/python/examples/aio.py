#!/usr/bin/env python3
"""asyncio: a coroutine as a tool, and a steer into the running prompt: aio.py [zot flags...] "prompt" "steer"."""

import asyncio
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from zot_client import AsyncClient, DoneEvent, ToolResultEvent, UserMessageEvent  # noqa: E402


async def main(args):
    async with AsyncClient(args[:-2]) as zot:
        @zot.tool(read_only=True)
        async def weather(city: str) -> str:
            """The weather in a city."""
            return f"fog in {city}"

        stream = await zot.prompt(args[-2])  # sent (the tool registered just before)
        await zot.steer(args[-1])  # None: the running prompt takes it at its next step
        async for ev in stream:
            if isinstance(ev, ToolResultEvent):
                print(f"[weather] {ev.content[0].text}", file=sys.stderr)
            elif isinstance(ev, UserMessageEvent) and ev.kind:
                print(f"[{ev.kind}] {ev.content[0].text}", file=sys.stderr)
            elif isinstance(ev, DoneEvent):
                print(ev.result.text)


asyncio.run(main(sys.argv[1:]))
