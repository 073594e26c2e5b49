#!/usr/bin/env python3
"""An example zot extension in Python, standard library only: a tool the
model can call, `weather`, that answers with a made-up forecast (it never
touches the network, so it works offline and in tests).

The protocol is one JSON object per line on stdin and stdout; stdout is
the protocol's, so logs go to stderr (zot keeps them in
$ZOT_HOME/logs/ext-weather.log).
"""
import json
import sys
import threading

lock = threading.Lock()  # one writer: frames never interleave


def emit(frame):
    with lock:
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


CONDITIONS = ["sunny", "cloudy", "fog", "light rain", "windy", "snow"]


def forecast(city):
    """A stable, made-up forecast: the same city always gets the same."""
    h = sum(ord(c) for c in city.lower())
    return f"{city}: {h % 30 - 5}°C, {CONDITIONS[h % len(CONDITIONS)]} (made-up forecast)"


def on_tool_call(frame):
    args = frame.get("args") or {}
    city = args.get("city")
    if not isinstance(city, str) or not city.strip():
        emit({"type": "tool_result", "id": frame["id"], "is_error": True,
              "content": [{"type": "text", "text": "want {\"city\": \"<name>\"}"}]})
        return
    emit({"type": "tool_result", "id": frame["id"],
          "content": [{"type": "text", "text": forecast(city.strip())}]})


def main():
    emit({"type": "hello", "name": "weather", "version": "1.0.0", "capabilities": ["tools"]})
    ack = json.loads(sys.stdin.readline() or "{}")
    if ack.get("type") != "hello_ack":
        log(f"expected hello_ack, got {ack!r}")
        return 1
    emit({"type": "register_tool", "name": "weather",
          "description": "Current weather for a city.",
          "schema": {"type": "object", "properties": {"city": {"type": "string"}},
                     "required": ["city"]},
          "timeout_ms": 5000})
    emit({"type": "ready"})
    for line in sys.stdin:
        try:
            frame = json.loads(line)
        except ValueError:
            log(f"skipped a line that is not JSON: {line!r}")
            continue
        kind = frame.get("type")
        if kind == "tool_call":
            on_tool_call(frame)
        elif kind == "shutdown":
            emit({"type": "shutdown_ack"})
            return 0
        # cancel, event and the rest: nothing to do for a tool this quick
    return 0


if __name__ == "__main__":
    sys.exit(main())
