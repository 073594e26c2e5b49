"""Checks the generated protocol types against the schema's examples.

Every ``examples`` entry of every definition in schema/rpc/*.json must parse with
its class (unions through their parse function) and turn back into the same
JSON. Unknown union types and unknown fields must pass through untouched, and
a missing required field must raise ValueError.

Run from clients/python: python3 -m unittest discover -s tests -v
"""

import copy
import dataclasses
import json
import re
import sys
import typing
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import zot_client  # noqa: E402
from zot_client import types as t  # noqa: E402

SCHEMA_DIR = HERE.parent.parent.parent / "schema" / "rpc"

# A member no schema version defines, used to check pass-through.
EXTRA_KEY = "zz_not_in_schema"
EXTRA_VALUE = {"nested": [1, "two", None]}


def load_defs():
    """Returns {name: definition} for every definition, in file order."""
    defs = {}
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        with path.open(encoding="utf-8") as f:
            defs.update(json.load(f)["$defs"])
    return defs


DEFS = load_defs()


def kind(d):
    """Tells what a definition becomes, as the generator does."""
    if "x-go-type" in d:
        return "custom"
    if "oneOf" in d:
        return "union"
    if d.get("type") == "string" and "enum" in d:
        return "enum"
    if d.get("type") == "object":
        return "object"
    return "scalar"


def snake(name):
    """ContentBlock -> content_block, keeping acronyms whole."""
    return re.sub(
        r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name
    ).lower()


def ref_name(ref):
    """Returns the definition name a $ref points to."""
    return ref.rsplit("/", 1)[-1]


def parser(name):
    """Returns the function that reads a definition's JSON."""
    if kind(DEFS[name]) == "union":
        return getattr(t, "parse_" + snake(name))
    return getattr(t, name).from_dict


def type_const(d):
    """Returns the `type` const of an object definition, or None."""
    return d.get("properties", {}).get("type", {}).get("const")


def variant_for(union_name, example):
    """Returns the variant definition name an example of a union selects."""
    for item in DEFS[union_name]["oneOf"]:
        name = ref_name(item["$ref"])
        if type_const(DEFS[name]) == example.get("type"):
            return name
    raise AssertionError(f"{union_name}: no variant for {example!r}")


def parseable():
    """Yields (name, example) for every object and union example."""
    for name, d in DEFS.items():
        if kind(d) in ("object", "union"):
            for ex in d["examples"]:
                yield name, ex


def attr(value, key):
    """Returns the attribute of a dataclass that holds JSON member key."""
    for candidate in (key, key + "_"):
        if candidate in {f.name for f in dataclasses.fields(value)}:
            return getattr(value, candidate)
    raise AssertionError(f"{type(value).__name__} has no field for {key!r}")


class SchemaTest(unittest.TestCase):
    def test_schema_is_found(self):
        self.assertTrue(SCHEMA_DIR.is_dir(), SCHEMA_DIR)
        self.assertGreater(len(DEFS), 10)
        self.assertGreater(len(list(parseable())), 10)

    def test_every_definition_is_exported(self):
        for name in DEFS:
            with self.subTest(name=name):
                self.assertIn(name, t.__all__)
                self.assertIs(getattr(zot_client, name), getattr(t, name))
        for name in t.__all__:
            self.assertTrue(hasattr(zot_client, name), name)


class RoundTripTest(unittest.TestCase):
    def test_examples_round_trip(self):
        for name, ex in parseable():
            with self.subTest(name=name, example=ex):
                value = parser(name)(copy.deepcopy(ex))
                want = name
                if kind(DEFS[name]) == "union":
                    want = variant_for(name, ex)
                self.assertIs(type(value), getattr(t, want))
                self.assertEqual(value.to_dict(), ex)
                self.assertEqual(json.loads(json.dumps(value.to_dict())), ex)

    def test_every_variant_parses_through_its_union(self):
        for name, d in DEFS.items():
            if kind(d) != "union":
                continue
            for item in d["oneOf"]:
                variant = ref_name(item["$ref"])
                for ex in DEFS[variant]["examples"]:
                    with self.subTest(union=name, variant=variant):
                        value = parser(name)(copy.deepcopy(ex))
                        self.assertIs(type(value), getattr(t, variant))
                        self.assertEqual(value.to_dict(), ex)

    def test_nested_values_are_parsed(self):
        checked = 0
        for name, ex in parseable():
            if kind(DEFS[name]) == "union":
                name = variant_for(name, ex)
            value = parser(name)(ex)
            for key, prop in DEFS[name]["properties"].items():
                if key == "type" or key not in ex:
                    continue
                items = [attr(value, key)]
                if prop.get("type") == "array":
                    items, prop = attr(value, key), prop["items"]
                if "$ref" not in prop:
                    continue
                target = ref_name(prop["$ref"])
                if kind(DEFS[target]) == "object":
                    classes = (getattr(t, target),)
                elif kind(DEFS[target]) == "union":
                    classes = typing.get_args(getattr(t, target))
                else:
                    continue
                for item in items:
                    with self.subTest(name=name, field=key):
                        self.assertIsInstance(item, classes)
                        checked += 1
        self.assertGreater(checked, 0)

    def test_absent_optionals_are_left_out(self):
        ev = t.TextDeltaEvent(seq=4, delta="All tests ")
        self.assertEqual(
            ev.to_dict(), {"type": "text_delta", "seq": 4, "delta": "All tests "}
        )
        ev.prompt_id = 7
        self.assertEqual(ev.to_dict()["prompt_id"], 7)

    def test_enums(self):
        for name, d in DEFS.items():
            if kind(d) != "enum":
                continue
            with self.subTest(name=name):
                values = typing.get_args(getattr(t, name))
                self.assertEqual(values, tuple(d["enum"]))
                consts = [
                    n for n in t.__all__ if getattr(t, n) == values and n != name
                ]
                self.assertEqual(len(consts), 1, consts)
                for ex in d["examples"]:
                    self.assertIn(ex, values)
        self.assertEqual(t.ERROR_CODES, tuple(DEFS["ErrorCode"]["enum"]))

    def test_scalars_and_custom_types(self):
        for name, d in DEFS.items():
            if kind(d) not in ("scalar", "custom"):
                continue
            with self.subTest(name=name):
                alias = getattr(t, name)
                classes = typing.get_args(alias) or (alias,)
                for ex in d["examples"]:
                    self.assertIsInstance(ex, classes)
        self.assertEqual(typing.get_args(t.ID), (str, int, float))


class ToleranceTest(unittest.TestCase):
    def test_extra_fields_pass_through(self):
        for name, ex in parseable():
            with self.subTest(name=name, example=ex):
                data = dict(copy.deepcopy(ex), **{EXTRA_KEY: EXTRA_VALUE})
                value = parser(name)(data)
                self.assertEqual(value.extra, {EXTRA_KEY: EXTRA_VALUE})
                self.assertEqual(value.to_dict(), data)

    def test_extra_fields_never_replace_known_ones(self):
        ev = t.TextDeltaEvent(seq=1, delta="a", extra={"delta": "b", "x": 1})
        self.assertEqual(
            ev.to_dict(), {"type": "text_delta", "seq": 1, "delta": "a", "x": 1}
        )

    def test_unknown_union_types_pass_through(self):
        for name, d in DEFS.items():
            if kind(d) != "union":
                continue
            with self.subTest(name=name):
                raw = {"type": "zz_future_type", "seq": 1, "v": {"a": [1]}}
                value = parser(name)(copy.deepcopy(raw))
                self.assertIs(type(value), getattr(t, "Unknown" + name))
                self.assertEqual(value.type, "zz_future_type")
                self.assertEqual(value.raw, raw)
                self.assertEqual(value.to_dict(), raw)

    def test_unknown_nested_block_passes_through(self):
        raw = {
            "role": "tool",
            "content": [
                {"type": "text", "text": "ok"},
                {"type": "zz_video", "frames": 3},
            ],
            "time": "2026-11-23T10:00:00Z",
        }
        msg = t.Message.from_dict(copy.deepcopy(raw))
        self.assertIsInstance(msg.content[0], t.TextBlock)
        self.assertIsInstance(msg.content[1], t.UnknownContentBlock)
        self.assertEqual(msg.to_dict(), raw)

    def test_missing_required_fields_raise(self):
        checked = 0
        for name, ex in parseable():
            target = name
            if kind(DEFS[name]) == "union":
                target = variant_for(name, ex)
            for key in DEFS[target].get("required", []):
                if key not in ex:
                    continue
                broken = {k: v for k, v in ex.items() if k != key}
                with self.subTest(name=name, missing=key):
                    with self.assertRaisesRegex(ValueError, re.escape(repr(key))):
                        parser(name)(broken)
                    checked += 1
        self.assertGreater(checked, 0)

    def test_bad_union_input_raises(self):
        for name, d in DEFS.items():
            if kind(d) != "union":
                continue
            parse = parser(name)
            for bad in ({}, {"type": 5}, {"type": None}, [], "text", None):
                with self.subTest(name=name, value=bad):
                    with self.assertRaises(ValueError):
                        parse(bad)

    def test_wrong_nested_shape_raises(self):
        with self.assertRaisesRegex(ValueError, r"UsageEvent\.cumulative"):
            t.UsageEvent.from_dict(
                {
                    "type": "usage", "seq": 1, "input": 1, "output": 1,
                    "cache_read": 0, "cache_write": 0, "cost_usd": 0,
                    "cumulative": [1],
                }
            )
        with self.assertRaisesRegex(ValueError, r"Message\.content: \[1\]"):
            t.Message.from_dict(
                {"role": "user", "content": [{"type": "text", "text": "a"}, 1],
                 "time": "2026-11-23T10:00:00Z"}
            )

    def test_variant_with_wrong_type_raises(self):
        with self.assertRaisesRegex(ValueError, "text_delta"):
            t.TextDeltaEvent.from_dict({"type": "done", "seq": 1, "delta": "x"})


class ResultTest(unittest.TestCase):
    def test_result_types_match_schema(self):
        want = {}
        for name, d in DEFS.items():
            if "x-result" in d:
                want[type_const(d)] = getattr(t, d["x-result"])
        self.assertGreater(len(want), 0)
        self.assertEqual(t.RESULT_TYPES, want)

    def test_parse_result(self):
        for command, cls in t.RESULT_TYPES.items():
            for ex in DEFS[cls.__name__]["examples"]:
                with self.subTest(command=command, example=ex):
                    value = t.parse_result(command, copy.deepcopy(ex))
                    self.assertIs(type(value), cls)
                    self.assertEqual(value.to_dict(), ex)
        self.assertIsNone(t.parse_result("clear", None))
        self.assertEqual(t.parse_result("zz_new_command", {"a": 1}), {"a": 1})

    def test_response_data_parses_by_command(self):
        for ex in DEFS["Response"]["examples"]:
            resp = t.Response.from_dict(ex)
            if resp.success and resp.data is not None:
                result = t.parse_result(resp.command, resp.data)
                self.assertIs(type(result), t.RESULT_TYPES[resp.command])


if __name__ == "__main__":
    unittest.main()
