"""hellopy: a zot extension run as `python3 hello.py` from its own folder.

It reads greeting.txt by a relative path, as an extension may, and
answers the /hellopy command with it. Standard library only.
"""
import json
import os
import sys


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


send({"type": "hello", "name": "hellopy", "version": "0.1.0", "capabilities": ["commands"]})
session_cwd = ""
for line in sys.stdin:
    try:
        f = json.loads(line)
    except ValueError:
        continue
    t = f.get("type")
    if t == "hello_ack":
        session_cwd = f.get("cwd", "")
        send({"type": "register_command", "name": "hellopy", "description": "say hello"})
        send({"type": "ready"})
    elif t == "command_invoked":
        with open("greeting.txt") as g:
            greeting = g.read().strip()
        send({"type": "command_response", "id": f["id"], "action": "display",
              "display": "%s (running in %s; the session is in %s)" % (greeting, os.getcwd(), session_cwd)})
    elif t == "shutdown":
        break
