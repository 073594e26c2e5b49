#!/usr/bin/env python3
"""Steering a running prompt: steer.py [zot flags...] "prompt" "steer"."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from zot_client import AssistantStartEvent, Client, DoneEvent, UserMessageEvent  # noqa: E402

with Client(sys.argv[1:-2]) as zot:
    zot.inject_context("the user is on the release branch", source="example")
    stream = zot.prompt(sys.argv[-2])
    steered = False
    for ev in stream:
        if isinstance(ev, AssistantStartEvent) and not steered:
            steered = zot.steer(sys.argv[-1]) is None  # None: the running prompt took it
        if isinstance(ev, UserMessageEvent) and ev.kind:
            print(f"[{ev.kind}] {ev.content[0].text.splitlines()[0]}", file=sys.stderr)
        if isinstance(ev, DoneEvent) and ev.result:
            print(ev.result.text)
