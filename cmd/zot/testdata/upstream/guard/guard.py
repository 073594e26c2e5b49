"""guard: a fail-closed zot extension that blocks every turn_start.

`python3 guard.py` is a healthy guard; `python3 guard.py misnamed` says
the wrong name in its hello and `python3 guard.py mute` never says hello,
so that its handshake fails.
"""
import json
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else ""


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


if mode == "mute":
    time.sleep(3600)
send({"type": "hello", "name": "not-guard" if mode == "misnamed" else "guard", "version": "1.0.0"})
for line in sys.stdin:
    try:
        f = json.loads(line)
    except ValueError:
        continue
    t = f.get("type")
    if t == "hello_ack":
        send({"type": "subscribe", "events": [], "intercept": ["turn_start", "tool_call"]})
        send({"type": "ready"})
    elif t == "event_intercept":
        send({"type": "event_intercept_response", "id": f["id"], "block": True,
              "reason": "guard: no model calls here (step %s)" % f.get("step")})
    elif t == "shutdown":
        break
