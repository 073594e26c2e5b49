"""zot_ext extensions driven through the real `zot rpc --provider scripted
--ext <dir>`: a tool, a command, an intercept and a panel, each as a user
of the package writes them, and the protocol's hard parts (cancel,
deadlines, errors, shutdown, stdout kept for frames)."""

import unittest

from harness import PACKAGE_DIR, ExtTestCase, requires_zot, result_text, tool_results

import zot_client as z

# One extension with a bit of everything, as an author would write it.
EVERYTHING = '''
import subprocess, sys
from zot_ext import Block, CommandError, Extension, Panel, Prompt, Rewrite, ToolError

ext = Extension("pyx", "1.2.3")

@ext.tool(schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
def shout(args):
    "Upper-case the text."
    print("a stray print goes to the log, not to zot")
    subprocess.run(["echo", "a child's output goes to the log too"], check=True)
    return args["text"].upper()

@ext.tool
def lookup(args):
    "Look a city up."
    raise ToolError("no such city: " + args.get("city", "?"))

@ext.tool
def crash(args):
    "Fails by accident."
    return {}["missing"]

@ext.tool(timeout=0.3)
def slow(args, request):
    "Takes longer than zot waits."
    request.cancelled.wait(10)
    ext.notify("slow gave up: " + request.reason, level="warn")
    return "too late"

@ext.command
def greet(args):
    "Ask the model to greet someone."
    return Prompt("Greet " + (args or "me") + " briefly.")

@ext.command("Show the host's model")
def where(args):
    return "model " + ext.host.model + " in " + ext.host.cwd

@ext.command
def broken(args):
    raise CommandError("no city given")

@ext.command
def oops(args):
    return 1 / 0

@ext.intercept_tool_call
def guard(call):
    command = call.tool_args.get("command", "") if call.tool_name == "bash" else ""
    if "rm -rf" in command:
        return Block("refused: rm -rf")
    if command.startswith("sudo "):
        return Rewrite(args={"command": command[len("sudo "):]})

count = 0

@ext.command
def counter(args):
    "A counter: up and down change it."
    return Panel(id="counter", title="Counter", lines=[str(count)], footer="up/down, esc")

@ext.on_panel_key
def key(k):
    global count
    count += {"up": 1, "down": -1}.get(k.key, 0)
    ext.render_panel(k.panel_id, title="Counter", lines=[str(count)])

@ext.on_panel_close
def closed(panel_id):
    ext.notify("closed " + panel_id)

@ext.on("turn_start")
def turn(ev):
    ext.notify("turn %d" % ev.step)

ext.run()
'''


@requires_zot
class ToolTest(ExtTestCase):
    def test_tools_results_errors_and_cancel(self):
        folder = self.extension("pyx", EVERYTHING)
        script = {"turns": [{"steps": [
            {"tool_calls": [
                {"id": "t1", "name": "shout", "args": {"text": "hello"}},
                {"id": "t2", "name": "lookup", "args": {"city": "Atlantis"}},
                {"id": "t3", "name": "crash", "args": {}},
                {"id": "t4", "name": "slow", "args": {}},
            ]},
            {"text": "done"},
        ]}]}
        c = self.client(folder, script)
        exts = self.ready(c)
        self.assertEqual([(e.name, e.state) for e in exts], [("pyx", "ready")])
        self.assertEqual(sorted(exts[0].tools), ["crash", "lookup", "shout", "slow"])

        results = {r.id: r for r in tool_results(c.prompt("go").collect())}
        self.assertEqual((result_text(results["t1"]), results["t1"].is_error), ("HELLO", False))
        self.assertEqual((result_text(results["t2"]), results["t2"].is_error), ("no such city: Atlantis", True))
        self.assertTrue(results["t3"].is_error)
        self.assertIn("tool crash failed: KeyError", result_text(results["t3"]))
        self.assertTrue(results["t4"].is_error, result_text(results["t4"]))
        # zot's cancel reached the handler, whose late answer was not sent.
        note = self.wait_for("the slow tool's notice", lambda: [
            e for e in self.pushed if isinstance(e, z.ExtNotifyEvent) and e.message.startswith("slow gave up")])
        self.assertEqual((note[0].message, note[0].level), ("slow gave up: timeout", "warn"))

        c.close(timeout=10)
        self.assertEqual(c.returncode, 0)
        log = self.log("pyx")
        # stdout carried frames only: the print and the child's output went
        # to the log, and zot skipped nothing.
        self.assertIn("a stray print goes to the log", log)
        self.assertIn("a child's output goes to the log too", log)
        self.assertNotIn("skipped a frame", log)
        self.assertNotIn("dropped a tool_result", log)
        self.assertIn("[zot] shutdown acknowledged", log)
        self.assertNotIn("had to be", log)


@requires_zot
class CommandTest(ExtTestCase):
    def test_commands(self):
        c = self.client(self.extension("pyx", EVERYTHING))
        self.ready(c)
        cmds = {x.name: x.description for x in c.get_commands().commands}
        self.assertEqual(cmds["greet"], "Ask the model to greet someone.")
        self.assertEqual(cmds["where"], "Show the host's model")

        result, stream = c.run_command("greet", "Ada")
        self.assertEqual((result.extension, result.action, result.text), ("pyx", "prompt", "Greet Ada briefly."))
        self.assertEqual(stream.collect()[-1].TYPE, "done")

        result, _ = c.run_command("where")
        self.assertEqual(result.action, "display")
        self.assertEqual(result.text, f"model {c.get_state().model} in {self.work}")

        result, _ = c.run_command("broken")
        self.assertEqual(result.error, "no city given")
        result, _ = c.run_command("oops")
        self.assertIn("command oops failed: ZeroDivisionError", result.error)


@requires_zot
class InterceptTest(ExtTestCase):
    def test_tool_call_intercept_blocks_and_rewrites(self):
        folder = self.extension("pyx", EVERYTHING)
        script = {"turns": [{"steps": [
            {"tool_calls": [
                {"id": "b1", "name": "bash", "args": {"command": "rm -rf /tmp/nothing-here"}},
                {"id": "b2", "name": "bash", "args": {"command": "sudo echo rewritten-ok"}},
                {"id": "b3", "name": "bash", "args": {"command": "echo plain"}},
            ]},
            {"text": "done"},
        ]}]}
        c = self.client(folder, script)
        # Started before the first prompt: zot loses that prompt's first
        # turn_start event for an extension it starts only then.
        self.ready(c)
        events = c.prompt("clean up").collect()
        results = {r.id: r for r in tool_results(events)}
        self.assertTrue(results["b1"].is_error)
        self.assertIn("refused: rm -rf", result_text(results["b1"]))
        self.assertFalse(results["b2"].is_error)
        self.assertTrue(result_text(results["b2"]).startswith("rewritten-ok\n"), result_text(results["b2"]))
        self.assertTrue(result_text(results["b3"]).startswith("plain\n"), result_text(results["b3"]))
        # The turn_start observer saw both model calls, in order (its
        # notices come in the prompt's stream or, once it ended, unrouted).
        def turns():
            got = [e.message for e in events + self.pushed if isinstance(e, z.ExtNotifyEvent) and e.message.startswith("turn ")]
            return got if len(got) >= 2 else None
        self.assertEqual(self.wait_for("turn notices", turns), ["turn 1", "turn 2"])


@requires_zot
class PanelTest(ExtTestCase):
    def test_panel_keys_apply_in_order(self):
        c = self.client(self.extension("pyx", EVERYTHING))
        result, _ = c.run_command("counter")
        self.assertEqual(result.action, "open_panel")
        self.assertEqual((result.panel.id, result.panel.title, result.panel.lines), ("counter", "Counter", ["0"]))
        keys = ["up"] * 12 + ["down"] * 5
        for k in keys:
            c.panel_key("counter", k)
        renders = self.wait_for("every render", lambda: (lambda r: r if len(r) == len(keys) else None)(
            [e for e in self.pushed if isinstance(e, z.PanelRenderEvent)]))
        want, n = [], 0
        for k in keys:
            n += 1 if k == "up" else -1
            want.append([str(n)])
        self.assertEqual([r.lines for r in renders], want)
        c.close_panel("counter")
        self.wait_for("the close notice", lambda: [e for e in self.pushed if isinstance(e, z.ExtNotifyEvent) and e.message == "closed counter"])


if __name__ == "__main__":
    unittest.main()


# Answers an author gets wrong: each fails the one request with a message
# that says why, and the extension goes on answering the next ones.
WRONG = '''
import datetime
from zot_ext import Extension, Rewrite

ext = Extension("wrong")

@ext.tool(timeout=5)
def weather(args):
    "Returns a dict, not text."
    return {"temp": 20, "sky": "clear"}

@ext.tool(timeout=5)
def when(args):
    "Returns text, in a result JSON cannot hold."
    from zot_ext import ToolResult
    r = ToolResult("today")
    r.content[0].text = datetime.date(2020, 1, 2)
    return r

@ext.tool(timeout=5)
def listing(args):
    "Returns a file name that is not UTF-8, as os.listdir gives it."
    return "caf\\udce9.txt"

@ext.intercept_tool_call
def guard(call):
    if call.tool_name == "bash":
        return Rewrite(args={"command": "echo hi", "at": datetime.date(2020, 1, 2)})

@ext.command
def hi(args):
    "Still answers."
    return "still here"

ext.run()
'''


@requires_zot
class WrongAnswerTest(ExtTestCase):
    def test_answers_that_cannot_be_sent_fail_their_request(self):
        script = {"turns": [{"steps": [
            {"tool_calls": [
                {"id": "w", "name": "weather", "args": {}},
                {"id": "d", "name": "when", "args": {}},
                {"id": "l", "name": "listing", "args": {}},
                {"id": "b", "name": "bash", "args": {"command": "echo hi"}},
            ]},
            {"text": "done"},
        ]}]}
        c = self.client(self.extension("wrong", WRONG), script)
        self.ready(c)
        results = {r.id: r for r in tool_results(c.prompt("go").collect())}
        self.assertTrue(results["w"].is_error, result_text(results["w"]))
        self.assertRegex(result_text(results["w"]), r"tool weather failed: TypeError: a tool returned dict.*json\.dumps")
        self.assertTrue(results["d"].is_error, result_text(results["d"]))
        self.assertRegex(result_text(results["d"]), r"tool when failed: TypeError: .*cannot be sent as JSON.*date")
        self.assertTrue(results["l"].is_error, result_text(results["l"]))
        self.assertRegex(result_text(results["l"]), r"tool listing failed: TypeError: .*cannot be sent as JSON.*surrogate")
        self.assertTrue(results["b"].is_error, result_text(results["b"]))
        self.assertRegex(result_text(results["b"]), r"guard failed: TypeError: .*cannot be sent as JSON.*date")
        result, _ = c.run_command("hi")
        self.assertEqual((result.action, result.text), ("display", "still here"))


@requires_zot
class ReadmeTest(ExtTestCase):
    def test_the_readme_example_works_as_written(self):
        readme = (PACKAGE_DIR / "README.md").read_text(encoding="utf-8")
        code = readme.split("```python\n", 1)[1].split("```", 1)[0]
        folder = self.extension("shout", code.split("\n", 1)[1])  # its own #! line is replaced
        script = {"turns": [{"steps": [
            {"tool_calls": [
                {"id": "s", "name": "shout", "args": {"text": "quiet"}},
                {"id": "b", "name": "bash", "args": {"command": "rm -rf / --no-preserve-root"}},
            ]},
            {"text": "done"},
        ]}]}
        c = self.client(folder, script)
        results = {r.id: r for r in tool_results(c.prompt("go").collect())}
        self.assertEqual(result_text(results["s"]), "QUIET")
        self.assertTrue(results["b"].is_error)
        self.assertIn("refused: rm -rf /", result_text(results["b"]))
        result, stream = c.run_command("greet", "Ada")
        self.assertEqual((result.action, result.text), ("prompt", "Greet Ada in one sentence."))
        stream.collect()
