"""Private helpers of the Python types zot-gen generates.

zot-gen copies this file, from the line after the marker below, into each
generated module (clients/python/zot_client/types.py). The imports above the
marker are among those the generated module makes, so that this file can be
read, linted and run on its own.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Callable, Dict, List, Mapping, Optional

# ---- zot-gen copies from here ----


def _check_object(d: Any, owner: str) -> None:
    """Raises ValueError unless d is a JSON object."""
    if not isinstance(d, collections.abc.Mapping):
        got = type(d).__name__
        raise ValueError(f"{owner}: expected a JSON object, got {got}")


def _check_type(d: Mapping[str, Any], want: str, owner: str) -> None:
    """Raises ValueError unless d["type"] is want."""
    got = d.get("type")
    if got is None:
        raise ValueError(f"{owner}: missing required field 'type'")
    if got != want:
        raise ValueError(f"{owner}: 'type' is {got!r}, want {want!r}")


def _field(
    d: Mapping[str, Any],
    key: str,
    owner: str,
    required: bool,
    conv: Optional[Callable[[Any], Any]] = None,
) -> Any:
    """Returns d[key] converted by conv; None when it is absent or null.

    Raises ValueError when a required key is missing or conv fails.
    """
    if key not in d:
        if required:
            raise ValueError(f"{owner}: missing required field {key!r}")
        return None
    v = d[key]
    if v is None or conv is None:
        return v
    try:
        return conv(v)
    except ValueError as e:
        raise ValueError(f"{owner}.{key}: {e}") from e


def _list_of(
    conv: Optional[Callable[[Any], Any]],
) -> Callable[[Any], List[Any]]:
    """Returns a converter of JSON arrays that applies conv to each item."""

    def convert(v: Any) -> List[Any]:
        if not isinstance(v, list):
            got = type(v).__name__
            raise ValueError(f"expected a JSON array, got {got}")
        out = []
        for i, item in enumerate(v):
            try:
                keep = conv is None or item is None
                out.append(item if keep else conv(item))
            except ValueError as e:
                raise ValueError(f"[{i}]: {e}") from e
        return out

    return convert


def _extra(d: Mapping[str, Any], known: frozenset) -> Dict[str, Any]:
    """Returns the members of d whose keys are not in known."""
    return {k: v for k, v in d.items() if k not in known}


def _to_json(v: Any) -> Any:
    """Turns dataclasses, and lists of them, back into JSON values."""
    if isinstance(v, list):
        return [_to_json(item) for item in v]
    to_dict = getattr(v, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    return v


def _merge_extra(
    d: Dict[str, Any], extra: Mapping[str, Any]
) -> Dict[str, Any]:
    """Adds the extra members to d, never replacing a known field."""
    for k, v in extra.items():
        d.setdefault(k, v)
    return d


def _parse_union(
    d: Any, owner: str, variants: Mapping[str, Any], unknown: Any
) -> Any:
    """Builds the variant d["type"] names, or an unknown value."""
    _check_object(d, owner)
    t = d.get("type")
    if t is None:
        raise ValueError(f"{owner}: missing required field 'type'")
    if not isinstance(t, str):
        got = type(t).__name__
        raise ValueError(f"{owner}: 'type' must be a string, got {got}")
    cls = variants.get(t)
    if cls is None:
        return unknown(type=t, raw=dict(d))
    return cls.from_dict(d)
