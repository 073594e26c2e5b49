#!/usr/bin/env python3
"""The door tests' extension, stdlib only. It answers in a fixed order
and pushes nothing unasked, so the frames a door shows are the same on
every run.

/greet notify <text>  pushes a notice, then answers noop
/greet display <text> answers with text to show
/greet panel          opens a panel; its keys re-render it, esc closes it
/greet <text>         answers with a prompt for the model
The tool door_echo returns its text.
"""
import json
import sys

def emit(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()

emit({"type": "hello", "name": "doorext", "version": "1.0.0", "capabilities": ["commands", "tools"]})
emit({"type": "register_command", "name": "greet", "description": "greet the door"})
emit({"type": "register_tool", "name": "door_echo", "description": "echo the text",
      "schema": {"type": "object", "properties": {"text": {"type": "string"}}}})
emit({"type": "ready"})

for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "tool_call":
        text = (msg.get("args") or {}).get("text", "")
        emit({"type": "tool_result", "id": msg["id"], "content": [{"type": "text", "text": "echo: " + str(text)}]})
    elif t == "command_invoked":
        args = msg.get("args", "")
        resp = {"type": "command_response", "id": msg["id"]}
        if args.startswith("notify "):
            emit({"type": "notify", "level": "info", "message": args[len("notify "):]})
            resp.update(action="noop")
        elif args.startswith("display "):
            resp.update(action="display", display=args[len("display "):])
        elif args == "panel":
            resp.update(action="open_panel", open_panel={"id": "p1", "title": "Door", "lines": ["one"], "footer": "esc closes"})
        else:
            resp.update(action="prompt", prompt="greetings: " + args)
        emit(resp)
    elif t == "panel_key":
        emit({"type": "panel_render", "panel_id": msg["panel_id"], "title": "Door",
              "lines": ["key " + msg["key"]]})
        if msg["key"] == "esc":
            emit({"type": "panel_close", "panel_id": msg["panel_id"]})
    elif t == "shutdown":
        emit({"type": "shutdown_ack"})
        break
