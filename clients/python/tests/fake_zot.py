#!/usr/bin/env python3
"""A stand-in for `zot rpc` that writes frames a real server may write in
the future or on a bad day, to test the clients' tolerance.

It reads one command per line and answers:

- prompt "passthrough": started, then a text delta with a raw U+2028 and a
  member no schema defines, an event of a type no schema defines, an event
  without prompt_id, a known event lacking a required field, a line that is
  not JSON, then done;
- prompt "die": started, one event, then exit status 3 (no done);
- a command with "fake_no_id": true: a failure response without id, as zot
  answers a line it could not read;
- anything else: success with no data.
"""

import json
import sys


def write(obj):
    # ensure_ascii=False: U+2028 goes out as its raw UTF-8 bytes.
    sys.stdout.buffer.write(json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


def main():
    seq = 0

    def event(pid, **fields):
        nonlocal seq
        seq += 1
        write({"seq": seq, "prompt_id": pid, **fields})

    for raw in sys.stdin.buffer:
        cmd = json.loads(raw)
        cid, typ = cmd.get("id"), cmd.get("type")
        if cmd.get("fake_no_id"):
            write({"type": "response", "command": "", "success": False, "error": "line too long", "code": "line_too_long"})
            continue
        if typ != "prompt":
            write({"type": "response", "id": cid, "command": typ, "success": True})
            continue
        write({"type": "response", "id": cid, "command": typ, "success": True, "data": {"started": True}})
        if cmd.get("message") == "die":
            event(cid, type="turn_start", step=1)
            sys.exit(3)
        event(cid, type="text_delta", delta="a\u2028b", zz_new_field={"x": 1})
        event(cid, type="zz_future_event", payload=[1, 2])
        seq += 1
        write({"type": "ext_notify", "seq": seq, "extension": "e", "level": "info", "message": "no prompt"})
        event(cid, type="turn_start")  # lacks "step"
        sys.stdout.buffer.write(b"this is not json\n")
        event(cid, type="done")


if __name__ == "__main__":
    main()
