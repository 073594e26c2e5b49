#!/usr/bin/env python3
"""An answer in a JSON shape, and the prompt's record: structured.py [zot flags...] "question"."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from zot_client import Client  # noqa: E402

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}

with Client(sys.argv[1:-1]) as zot:
    res = zot.run(sys.argv[-1], output_schema=CITY)
    print(json.dumps(res.structured))
    u = res.usage
    print(f"{res.stop}: {res.turns} turns, {res.tool_calls} tool calls, "
          f"{u.input}+{u.output} tokens, ${u.cost_usd:.4f}", file=sys.stderr)
