"""JSON as clients send it: the one decoding of a request body or an input line, for the service and
the command line alike.

Besides JSON's grammar it refuses what the standard decoder accepts and neardup cannot use: strings
with a lone surrogate (``"\\ud800"``, not Unicode text: they fail later, in the Traditional→Simplified
step or when written) and nesting deeper than :data:`MAX_JSON_DEPTH` (the standard decoder recurses,
and runs out of stack at a few thousand levels).
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import sys
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "JSONRefused", "decode_json", "decode_text"]

#: The deepest nesting of arrays and objects a JSON body (or NDJSON line) may have; deeper is a 400
#: ``json_too_deep``. A document's own fields are held to 20 levels by ``validate_document``.
MAX_JSON_DEPTH = 100

_SURROGATE = re.compile("[\\ud800-\\udfff]")


class JSONRefused(ValueError):
    """JSON the service does not take. ``kind`` is the error type (``invalid_body``: not UTF-8,
    ``invalid_json``, ``json_too_deep``, ``lone_surrogate``); the message is a predicate that reads
    after "the body is" or "line 3:"."""

    def __init__(self, kind: str, problem: str) -> None:
        super().__init__(problem)
        self.kind = kind


def decode_json(data: str | bytes | bytearray) -> Any:
    """The value of a JSON text (bytes must be UTF-8), or :class:`JSONRefused` naming the problem.

    >>> decode_json(rb'{"a": ["\\ud83d\\ude00"]}')
    {'a': ['😀']}
    >>> try:
    ...     decode_json(rb'{"a": ["x", "\\ud800"]}')
    ... except JSONRefused as exc:
    ...     print(exc.kind, "|", str(exc)[:65])
    lone_surrogate | not Unicode text: a lone surrogate \\ud800 in the string at $.a[1]
    """
    if isinstance(data, str):
        return decode_text(data)
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONRefused("invalid_body", f"not UTF-8 (byte {exc.start})") from exc
    return decode_text(text, from_utf8=True)


def decode_text(text: str, from_utf8: bool = False) -> Any:
    """The value of a JSON text, or :class:`JSONRefused`. ``from_utf8``: the text was decoded from UTF-8
    (strictly), so it holds no surrogate itself and only escapes need looking at."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONRefused(
            "invalid_json", f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    except RecursionError as exc:  # the standard decoder recurses: thousands of levels exhaust the stack
        raise _too_deep() from exc
    except ValueError as exc:  # Python's own limit on an integer's digits
        raise JSONRefused(
            "invalid_json", f"not JSON neardup reads (a number of more than {sys.get_int_max_str_digits()} digits)"
        ) from exc
    # The walk is skipped when the text cannot hold what it looks for, as for most bodies: nesting
    # deeper than the limit needs that many brackets, a lone surrogate needs a \uD800-\uDFFF escape
    # (a cheap over-approximation: "\ud" or "\uD") or, in a str not from UTF-8, a surrogate itself.
    maybe_deep = text.count("[") + text.count("{") > MAX_JSON_DEPTH
    maybe_surrogate = (
        "\\ud" in text
        or "\\uD" in text
        or (not from_utf8 and not text.isascii() and _SURROGATE.search(text) is not None)
    )
    if maybe_deep or maybe_surrogate:
        _check(value, maybe_surrogate)
    return value


def _too_deep() -> JSONRefused:
    return JSONRefused("json_too_deep", f"nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects (the limit)")


def _check(value: Any, strings: bool) -> None:
    """Nesting at most MAX_JSON_DEPTH and (``strings``) no lone surrogate in a key or a string: one
    level at a time, without recursion; empty containers are not visited."""
    if strings and isinstance(value, str):
        _check_strings(value, [value])
    level = [value] if isinstance(value, dict | list) else []
    depth = 0  # of the containers in `level`; the top value is at depth 1
    while level:
        depth += 1
        below: list[Any] = []
        for node in level:
            if type(node) is dict:
                if strings:
                    _check_strings(value, node)
                items: Any = node.values()
            else:
                items = node
            containers = [c for c in items if type(c) is dict or type(c) is list]
            if containers:
                if depth >= MAX_JSON_DEPTH:
                    raise _too_deep()
                below.extend(c for c in containers if c)
            if strings:
                _check_strings(value, items)
        level = below


def _check_strings(root: Any, values: Any) -> None:
    """No lone surrogate in the strings among ``values`` (searched as one text; Python never pairs
    surrogates up when it joins strings)."""
    strings = [s for s in values if type(s) is str]
    joined = "".join(strings)
    if joined.isascii():
        return
    found = _SURROGATE.search(joined)
    if found:
        target = strings[bisect.bisect_right(list(itertools.accumulate(map(len, strings))), found.start())]
        raise JSONRefused(
            "lone_surrogate",
            f"not Unicode text: a lone surrogate \\u{ord(found.group()):04x} in {_where(root, target)} "
            "(a pair such as \\ud83d\\ude00 is fine)",
        )


def _where(root: Any, target: str) -> str:
    """Where in ``root`` a string equal to ``target`` first is: "the string at $.a[1]" or "a key of $.a"."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        keys: Any
        if type(node) is dict:
            if target in node:
                return f"a key of {_path(path)}"
            keys, values = list(node), list(node.values())
        elif type(node) is list:
            keys, values = range(len(node)), node
        else:
            if node == target:
                return f"the string at {_path(path)}"
            continue
        if target in values:
            return f"the string at {_path((*path, keys[values.index(target)]))}"
        stack.extend([(v, (*path, keys[i])) for i, v in enumerate(values) if type(v) is dict or type(v) is list])
    return "a string"


def _path(path: tuple[str | int, ...]) -> str:
    """``$.a[1].b``; keys that are not plain names (or hold a surrogate) as JSON strings."""
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier() and part.isascii():
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out
