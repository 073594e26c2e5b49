#!/usr/bin/env python3
"""Sends one prompt to ``zot rpc`` and streams the answer.

    prompt.py [--zot PATH] [zot flags...] "message"

The assistant's text goes to stdout as it streams; tool calls, tool results,
usage and errors go to stderr, one line each. zot is --zot PATH, else
ZOT_BIN, else ``zot`` on PATH; every other argument but the last is passed
to ``zot rpc`` (e.g. ``--provider scripted``). When ZOTCORE_RPC_TOKEN is
set, zot inherits it and this client authenticates with it.

Exit status: 0 when the prompt ended with ``done`` and no ``error`` event,
1 when an error event came or zot failed, 2 on a usage error.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from zot_client import (  # noqa: E402
    AssistantMessageEvent,
    Client,
    ErrorEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
    ZotClosedError,
    ZotError,
)

USAGE = 'usage: prompt.py [--zot PATH] [zot flags...] "message"'


def money(usd, unknown):
    """A cost in dollars, "unknown" for a model without known prices (never
    $0, which would read as free), and a known part "+ unknown" for a total
    that includes such calls."""
    if not unknown:
        return f"${usd:.6f}"
    return f"${usd:.6f} + unknown" if usd > 0 else "unknown"


def parse_args(argv):
    """Returns (zot path or None, zot flags, message); exits 2 on misuse."""
    binary = None
    if argv and argv[0] == "--zot":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            sys.exit(2)
        binary, argv = argv[1], argv[2:]
    elif argv and argv[0].startswith("--zot="):
        binary, argv = argv[0][len("--zot="):], argv[1:]
    if not argv or argv[-1] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    return binary, argv[:-1], argv[-1]


def describe(ev):
    """Returns the stderr line for an event, or None for none."""
    if isinstance(ev, ToolCallEvent):
        return f"tool_call: {ev.name} {json.dumps(ev.args, ensure_ascii=False)}"
    if isinstance(ev, ToolResultEvent):
        return f"tool_result: {ev.id} {'error' if ev.is_error else 'ok'}"
    if isinstance(ev, UsageEvent):
        return (
            f"usage: input={ev.input} output={ev.output} cache_read={ev.cache_read} "
            f"cache_write={ev.cache_write} cost={money(ev.cost_usd, ev.cost_unknown)} "
            f"total={money(ev.cumulative.cost_usd, ev.cumulative.cost_unknown)}"
        )
    if isinstance(ev, ErrorEvent):
        code = f" ({ev.code})" if ev.code else ""
        return f"error: {ev.message}{code}"
    return None


def run(binary, flags, message):
    """Runs the prompt and returns the exit status."""
    token = os.environ.get("ZOTCORE_RPC_TOKEN")
    failed = False
    last = ""
    apart = False  # the next text starts a message after one with text
    with Client(flags, binary=binary) as zot:
        if token:
            zot.hello(token)
        try:
            for ev in zot.prompt(message):
                if isinstance(ev, TextDeltaEvent):
                    if ev.delta and apart:
                        sys.stdout.write("\n")  # a blank line between two messages' texts
                        apart = False
                    sys.stdout.write(ev.delta)
                    sys.stdout.flush()
                    last = ev.delta or last
                    continue
                if isinstance(ev, AssistantMessageEvent):
                    # A message ended: end its line (before stderr lines),
                    # and set the next message's text apart.
                    if last and not last.endswith("\n"):
                        sys.stdout.write("\n")
                        sys.stdout.flush()
                        last = "\n"
                    apart = bool(last)
                if isinstance(ev, ErrorEvent):
                    failed = True
                line = describe(ev)
                if line is not None:
                    if last and not last.endswith("\n"):
                        # end the text's line first: on a terminal the two
                        # streams share the screen
                        sys.stdout.write("\n")
                        sys.stdout.flush()
                        last = "\n"
                    print(line, file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            # Stop the work rather than let close() wait for it. (From a
            # terminal zot got the SIGINT too and may be gone already.)
            try:
                zot.abort(all=True)
            except (ZotError, ZotClosedError, TimeoutError):
                pass
            print(file=sys.stderr)
            return 130
    if last and not last.endswith("\n"):
        sys.stdout.write("\n")
    return 1 if failed else 0


def main(argv):
    binary, flags, message = parse_args(argv)
    try:
        return run(binary, flags, message)
    except (ZotError, ZotClosedError, OSError) as e:
        print(f"prompt.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
