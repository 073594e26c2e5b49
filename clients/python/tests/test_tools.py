"""Tests of client tools against the real `zot rpc`: a decorated Python
function is called by the model with its arguments and its return value is
the tool's result; an exception is a failed call; a taken name is
name_taken; unregistering works by name."""

import unittest
from typing import Optional

from harness import ZotTestCase, requires_zot

import zot_client as z


def _calls(*calls):
    return {"turns": [{"steps": [{"tool_calls": [{"name": n, "args": a}]}, {"text": "done"}]} for n, a in calls]}


@requires_zot
class ToolsTest(ZotTestCase):
    def test_decorated_function_runs(self):
        c = self.client(_calls(("weather", {"city": "Oslo"}), ("broken", {})))

        @c.tool(read_only=True)
        def weather(city: str, unit: Optional[str] = None) -> str:
            """The weather in a city."""
            return "fog in " + city

        @c.tool
        def broken() -> str:
            raise RuntimeError("the service is down")

        evs = c.prompt("weather in Oslo").collect()
        call = next(e for e in evs if isinstance(e, z.ClientToolCallEvent))
        self.assertEqual((call.tool, call.args), ("weather", {"city": "Oslo"}))
        result = next(e for e in evs if isinstance(e, z.ToolResultEvent))
        self.assertFalse(result.is_error)
        self.assertEqual(result.content[0].text, "fog in Oslo")

        evs = c.prompt("broken").collect()
        result = next(e for e in evs if isinstance(e, z.ToolResultEvent))
        self.assertTrue(result.is_error)
        self.assertEqual(result.content[0].text, "the service is down")

        with self.assertRaises(z.ZotError) as cm:
            c.register_tools(z.Tool(weather, name="bash"))
        self.assertEqual(cm.exception.code, "name_taken")
        self.assertEqual(c.unregister_tools("broken"), ["weather"])
        with self.assertRaises(z.ZotError) as cm:
            c.unregister_tools("broken")
        self.assertEqual(cm.exception.code, "not_found")

    def test_schema_from_signature(self):
        def f(a: str, b: int, c: float = 1.0, d: bool = False, e: Optional[list] = None) -> str:
            return ""

        self.assertEqual(
            z.Tool(f).schema,
            {
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "integer"},
                    "c": {"type": "number"},
                    "d": {"type": "boolean"},
                    "e": {"type": "array"},
                },
                "required": ["a", "b"],
            },
        )


if __name__ == "__main__":
    unittest.main()
