"""Runs examples/prompt.py as a program against the real `zot rpc`."""

import os
import subprocess
import sys

from harness import CLIENT_DIR, ECHO_SCRIPT, ERROR_SCRIPT, ZOT, ZotTestCase, requires_zot

PROMPT_PY = str(CLIENT_DIR / "examples" / "prompt.py")


class PromptExampleTest(ZotTestCase):
    def run_example(self, *args, env=None):
        child_env = dict(os.environ)
        child_env.pop("ZOTCORE_RPC_TOKEN", None)
        child_env.update(env or {})
        return subprocess.run(
            [sys.executable, PROMPT_PY, *args],
            capture_output=True,
            text=True,
            env=child_env,
            cwd=self.tmp,
            timeout=60,
        )

    def test_usage_error(self):
        p = self.run_example()
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage:", p.stderr)

    @requires_zot
    def test_tools_and_usage_go_to_stderr(self):
        p = self.run_example("--zot", ZOT, *self.zot_flags(), "show me")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.strip(), "the answer streams to stdout")
        self.assertNotIn("tool_call", p.stdout)
        # The two messages' texts are paragraphs apart, as zot -p prints them.
        self.assertIn("at work.\n\nThe bash tool ran", p.stdout)
        self.assertTrue(p.stdout.endswith("back to me.\n"), p.stdout)
        self.assertIn('tool_call: bash {"command": "echo hello from zot', p.stderr)
        self.assertIn("tool_result: ", p.stderr)
        self.assertEqual(p.stderr.count("usage: input="), 2, p.stderr)

    @requires_zot
    def test_unpriced_cost_is_unknown(self):
        p = self.run_example("--zot", ZOT, *self.zot_flags(), "--model", "not-in-the-catalog", "show me")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("cost=unknown total=unknown"), 2, p.stderr)
        self.assertNotIn("$0.000000", p.stderr)

    @requires_zot
    def test_echo_text_exactly(self):
        p = self.run_example(*self.zot_flags(ECHO_SCRIPT), "it's \"quoted\" $HOME\nand two lines",
                             env={"ZOT_BIN": ZOT})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "You said: it's \"quoted\" $HOME\nand two lines\n")

    @requires_zot
    def test_error_event_exits_1(self):
        p = self.run_example("--zot", ZOT, *self.zot_flags(ERROR_SCRIPT), "fail please")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("error: ", p.stderr)
        self.assertIn("scripted failure", p.stderr)

    @requires_zot
    def test_token_from_environment(self):
        p = self.run_example("--zot", ZOT, *self.zot_flags(ECHO_SCRIPT), "hi",
                             env={"ZOTCORE_RPC_TOKEN": "test-token-not-a-secret"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "You said: hi\n")

    @requires_zot
    def test_bad_flag_exits_1(self):
        p = self.run_example("--zot", ZOT, "--provider", "scripted", "--no-such-flag", "hi")
        self.assertEqual(p.returncode, 1)
        self.assertIn("prompt.py:", p.stderr)


TOOL_PY = str(CLIENT_DIR / "examples" / "tool.py")


class ToolExampleTest(ZotTestCase):
    @requires_zot
    def test_the_model_calls_the_function(self):
        script = {"turns": [{"steps": [
            {"tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}]},
            {"text": "It is foggy in Oslo."},
        ]}]}
        p = subprocess.run(
            [sys.executable, TOOL_PY, *self.zot_flags(script), "weather in Oslo?"],
            capture_output=True, text=True, env={**os.environ, "ZOT_BIN": ZOT}, cwd=self.tmp, timeout=60,
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("[weather] fog and 12 degrees in Oslo", p.stderr)
        self.assertEqual(p.stdout, "It is foggy in Oslo.\n")


STEER_PY = str(CLIENT_DIR / "examples" / "steer.py")


class SteerExampleTest(ZotTestCase):
    @requires_zot
    def test_the_steer_lands_in_the_running_prompt(self):
        # The scripted provider counts each user message as a prompt: the
        # prompt and the context pick the second turn, the steer the third.
        script = {"turns": [
            {"steps": [{"text": "not reached"}]},
            {"steps": [{"text": "working on it", "chunk": 2, "delay_ms": 100}]},
            {"steps": [{"echo": True}]},
        ]}
        p = subprocess.run(
            [sys.executable, STEER_PY, *self.zot_flags(script), "fix the build", "use make"],
            capture_output=True, text=True, env={**os.environ, "ZOT_BIN": ZOT}, cwd=self.tmp, timeout=60,
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("[context] <system-context", p.stderr)
        self.assertIn("[steer] use make", p.stderr)
        self.assertEqual(p.stdout, "You said: use make\n")


STRUCTURED_PY = str(CLIENT_DIR / "examples" / "structured.py")


class StructuredExampleTest(ZotTestCase):
    @requires_zot
    def test_the_answer_is_parsed_after_a_corrective_turn(self):
        script = {"turns": [
            {"steps": [{"text": "Paris, about two million people.", "usage": {"input": 20, "output": 8}}]},
            {"steps": [{"text": '{"city": "Paris", "population": 2100000}', "usage": {"input": 40, "output": 12}}]},
        ]}
        p = subprocess.run(
            [sys.executable, STRUCTURED_PY, *self.zot_flags(script), "capital of France?"],
            capture_output=True, text=True, env={**os.environ, "ZOT_BIN": ZOT}, cwd=self.tmp, timeout=60,
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, '{"city": "Paris", "population": 2100000}\n')
        self.assertIn("end_turn: 2 turns, 0 tool calls, 60+20 tokens", p.stderr)
