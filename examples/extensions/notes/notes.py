#!/usr/bin/env python3
"""notes: an example zot extension written with zot_ext (clients/python-ext).

The model keeps notes with the `note` tool; you read them in a panel
(/notes: up and down move, x deletes, esc closes). They are kept in
notes.json in the extension's data folder, so they survive restarts.

zot_ext must be importable by the Python that runs this file: install it
beside the script, then install the extension (from a checkout of zot):

    pip install --no-index --target examples/extensions/notes ./clients/python-ext
    zot ext install examples/extensions/notes
"""

import json
import os
import threading

from zot_ext import Extension, Panel, ToolError

ext = Extension("notes", "1.0.0")
lock = threading.Lock()  # tools run on threads of their own
notes = []
cursor = 0


def path():
    return os.path.join(ext.host.data_dir, "notes.json")


@ext.on_start
def load(host):
    global notes
    try:
        with open(path(), encoding="utf-8") as f:
            notes = json.load(f)
    except FileNotFoundError:
        notes = []


def save():
    tmp = path() + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(notes, f, indent=2)
    os.replace(tmp, path())


@ext.tool(schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
def note(args):
    "Keep a short note for the user; returns every note kept so far."
    text = str(args.get("text", "")).strip()
    if not text:
        raise ToolError('want {"text": "..."}, a note that is not empty')
    with lock:
        notes.append(text)
        save()
        return "\n".join(f"{i}. {n}" for i, n in enumerate(notes, 1))


def panel():
    lines = [("▸ " if i == cursor else "  ") + n for i, n in enumerate(notes)] or ["(no notes yet)"]
    return Panel(id="notes", title=f"Notes ({len(notes)})", lines=lines, footer="↑/↓ move · x delete · esc close")


@ext.command(name="notes")
def show(args):
    "Show the notes the model kept."
    with lock:
        return panel()


@ext.on_panel_key
def key(k):
    global cursor
    with lock:
        if k.key == "esc":
            ext.close_panel(k.panel_id)
            return
        if k.key == "up":
            cursor = max(0, cursor - 1)
        elif k.key == "down":
            cursor = max(0, min(len(notes) - 1, cursor + 1))
        elif k.key == "rune" and k.text == "x" and notes:
            del notes[cursor]
            cursor = min(cursor, max(0, len(notes) - 1))
            save()
        ext.render_panel(panel())


ext.run()
