#!/usr/bin/env python3
"""A test extension for zot's extension host, stdlib only.

argv[1] is the mode, argv[2] the extension's name (default "py"). It
reports what it sees with notify frames, so a test can follow.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
NAME = sys.argv[2] if len(sys.argv) > 2 else "py"
lock = threading.Lock()


def emit(obj):
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def note(msg, level="info"):
    emit({"type": "notify", "level": level, "message": msg})


if MODE == "silent":  # never says hello
    time.sleep(3600)
    sys.exit(0)

if MODE == "stubborn":  # ignores shutdown, stdin's end and SIGTERM
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
# "deaf" ignores shutdown and stdin's end, and dies of SIGTERM.

if MODE == "garbage":
    print("this is not json", flush=True)

hello = {"type": "hello", "name": NAME, "version": "1.0.0", "capabilities": ["commands", "tools", "events"]}
if MODE == "promised":  # promises ready, then never sends it, and is quiet
    hello["sends_ready"] = True
emit(hello)

if MODE == "wrongname":
    time.sleep(3600)

if MODE == "garbage":
    print("still not json {", flush=True)
    print("x" * 5000, flush=True)  # over the test's frame limit
    print(json.dumps({"type": "teleport"}), flush=True)
    print(json.dumps({"type": "tool_result", "id": "999", "content": []}), flush=True)

emit({"type": "register_command", "name": "hello-" + NAME, "description": "say hi"})
emit({"type": "register_tool", "name": NAME + "_echo", "description": "echo the text",
      "schema": {"type": "object", "properties": {"text": {"type": "string"}}}})
emit({"type": "register_tool", "name": NAME + "_slow", "description": "never answers", "timeout_ms": 300})
if MODE == "shadow":  # a command named like one of zot's own
    emit({"type": "register_command", "name": "clear", "description": "not zot's"})
if MODE == "dup":  # a tool and a command another extension may offer too
    emit({"type": "register_tool", "name": "dup_tool", "description": "who answers"})
    emit({"type": "register_command", "name": "dup", "description": "who answers"})
intercept = {
    "guard": ["tool_call"],
    "hang_intercept": ["tool_call"],
    "turn_guard": ["turn_start"],
    "redact": ["assistant_message"],
}.get(MODE, [])
emit({"type": "subscribe",
      "events": ["session_start", "turn_start", "tool_call", "turn_end", "assistant_message"],
      "intercept": intercept})

if MODE == "chatty":  # keeps talking, never ready
    def chat():
        n = 0
        while True:
            n += 1
            note("still setting up %d" % n)
            time.sleep(0.05)
    threading.Thread(target=chat, daemon=True).start()
elif MODE in ("quiet", "promised"):  # never ready, and quiet
    pass
else:
    emit({"type": "ready"})

if MODE == "group":  # leaves a child in its process group
    child = subprocess.Popen(["sleep", "3600"])
    note("pids %d %d" % (os.getpid(), child.pid))


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def on_tool(msg):
    args = msg.get("args") or {}
    if msg["name"] == NAME + "_slow":
        return
    if MODE == "crash_on_tool":
        os._exit(3)
    if msg["name"] == "dup_tool":
        emit({"type": "tool_result", "id": msg["id"], "content": [{"type": "text", "text": "from " + NAME}]})
        return
    content = [{"type": "text", "text": "echo: " + str(args.get("text", ""))}]
    if args.get("image") == "good":  # a 1x1 PNG
        content.append({"type": "image", "mime_type": "image/png", "data": PNG})
    elif args.get("image") == "bad":
        content.append({"type": "image", "mime_type": "image/png", "data": "bm90IGFuIGltYWdl"})
    emit({"type": "tool_result", "id": msg["id"], "content": content})


def on_command(msg):
    args = msg.get("args", "")
    resp = {"type": "command_response", "id": msg["id"]}
    if args.startswith("display "):
        resp.update(action="display", display=args[len("display "):])
    elif args.startswith("insert "):
        resp.update(action="insert", insert=args[len("insert "):])
    elif args == "panel":
        resp.update(action="open_panel", open_panel={"id": "p1", "title": "Panel", "lines": ["one"], "footer": "esc"})
    elif args == "fail":
        resp.update(action="noop", error="it failed")
    elif args == "noop":
        resp.update(action="noop")
    else:
        resp.update(action="prompt", prompt="hi from " + NAME + ": " + args)
    emit(resp)


def on_intercept(msg):
    ev = msg["event"]
    if MODE == "hang_intercept":
        return
    resp = {"type": "event_intercept_response", "id": msg["id"]}
    if ev == "tool_call":
        args = msg.get("tool_args") or {}
        if "rm -rf" in json.dumps(args):
            resp.update(block=True, reason="refused: rm -rf")
        elif "text" in args:
            resp.update(modified_args={"text": "guarded " + args["text"]})
    elif ev == "turn_start":
        resp.update(block=True, reason="outside business hours")
    elif ev == "assistant_message":
        resp.update(replace_text=msg.get("text", "").replace("SECRET", "[redacted]"))
    emit(resp)


for line in sys.stdin:
    msg = json.loads(line)
    t = msg["type"]
    if t == "tool_call":
        on_tool(msg)
    elif t == "command_invoked":
        on_command(msg)
    elif t == "event_intercept":
        on_intercept(msg)
    elif t == "event":
        detail = msg.get("step") or msg.get("tool_name") or msg.get("stop") or msg.get("text") or ""
        note("event %s %s" % (msg["event"], detail))
    elif t == "cancel":
        note("cancel %s %s" % (msg["id"], msg.get("reason", "")))
    elif t == "panel_key":
        emit({"type": "panel_render", "panel_id": msg["panel_id"], "title": "Panel",
              "lines": ["key " + msg["key"] + " " + msg.get("text", "")]})
        if msg["key"] == "esc":
            emit({"type": "panel_close", "panel_id": msg["panel_id"]})
    elif t == "hello_ack":
        if MODE == "probe":  # says what it was told and what it runs in
            note("hello_ack " + json.dumps(msg, sort_keys=True))
            note("cwd " + os.getcwd())
            note("token " + ("set" if "ZOTCORE_RPC_TOKEN" in os.environ else "unset"))
    elif t == "panel_close":
        note("panel closed " + msg["panel_id"])
    elif t == "shutdown":
        if MODE in ("stubborn", "deaf"):
            note("shutdown ignored")
            continue
        emit({"type": "shutdown_ack"})
        break

if MODE in ("stubborn", "deaf"):
    while True:
        time.sleep(1)
