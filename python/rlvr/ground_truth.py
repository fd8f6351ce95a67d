"""Where the tests are in what a trainer hands over, and the plain JSON they become.

Trainers pass a record's tests in many shapes: the release's `label` column, its
`metadata.ground_truth`, verl's `reward_model` struct, a whole row, a JSON string; and through
`datasets`, pyarrow or pandas, with `null` for every key a row does not have
(`{"inputs": [...], "outputs": [...], "functional": None}`) and numpy arrays and scalars
instead of lists and numbers. `tests_of` turns any of them into the tests object `rlvr serve`
scores; every adapter and `rlvr.Client` use it, so they all accept the same shapes
(docs/serve.md, "Ground truth shapes").

Rules, in order:

* numpy arrays, numpy scalars, pandas/pyarrow values become lists, numbers and strings;
  a key whose value is `None` (or NaN, or `pandas.NA`) is the same as an absent key.
* `{"inputs", "outputs"}` or `{"functional"}` is the tests object itself.
* `{"assert_case": [...]}` (verl's SandboxFusion form, written by `rlvr export --layout verl
  --data-source codecontests`) is `{"functional": [...]}`.
* otherwise the tests are in `ground_truth` (verl's `reward_model` struct, TRL's column),
  `metadata.ground_truth` or `label` (a release row), looked up in that order; the first
  present decides, even when it holds no tests. For a dataset row this is the rule of
  `rlvr verify --dataset` and `rlvr serve --dataset` (`rlvr_dataset::ground_truth_of_row`):
  both are checked against one table of cases,
  `crates/rlvr-dataset/tests/fixtures/ground_truth_of_rows.json`.
* a JSON string is parsed when it needs any of the above; a string that already starts with a
  tests key and holds no `null` is passed on untouched (the server parses it once).

A ground truth may instead name a row of the dataset the server holds (`rlvr serve --dataset`,
issue 34): `{"index": N}` (zero-based row) or `{"hash": "..."}` (its `metadata.hash`), as a
mapping or a JSON string; `reference_of` finds it, and the job then carries that key instead of
`ground_truth`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping, Optional

TEST_KEYS = ("inputs", "outputs", "functional")
"""Keys that make an object the tests object itself."""

WRAPPER_KEYS = ("ground_truth", "metadata", "label")
"""Keys under which a wrapper holds the tests, in lookup order (`metadata` via its `ground_truth`)."""

COLUMNS = ("ground_truth", "label", "metadata", "reward_model")
"""Dataset columns the TRL adapter looks in, in order, when no column is named."""

_FIRST_KEY = re.compile(r'\s*\{\s*"(\w+)"')


class GroundTruthError(ValueError):
    """No tests could be found in a value (says what the value looked like)."""


REFERENCE_KEYS = ("index", "hash")
"""Keys that name a row of the server's dataset instead of carrying its tests."""


def reference_of(value: Any) -> Optional[dict]:
    """`{"index": N}` or `{"hash": "..."}` when `value` is only that (a mapping or a JSON
    string), else None."""
    if isinstance(value, str):
        text = value.strip()
        if not (text.startswith("{") and any(f'"{key}"' in text[:64] for key in REFERENCE_KEYS)):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    present = {key: plain(item) for key, item in value.items() if not is_missing(item)}
    if len(present) == 1:
        key, item = next(iter(present.items()))
        if key == "index" and isinstance(item, int) and not isinstance(item, bool):
            return {"index": item}
        if key == "hash" and isinstance(item, str):
            return {"hash": item}
    return None


def is_missing(value: Any) -> bool:
    """`None`, a float NaN, `pandas.NA` / `NaT`: what a table puts where a row has no value."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def plain(value: Any) -> Any:
    """`value` with numpy/pandas/pyarrow containers and scalars turned into plain Python, and
    keys holding a missing value dropped from every mapping."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items() if not is_missing(item)}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if is_missing(value):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8")
    for method in ("as_py", "to_pylist"):  # pyarrow scalars and arrays
        convert = getattr(value, method, None)
        if callable(convert):
            return plain(convert())
    to_list = getattr(value, "tolist", None)  # numpy arrays and scalars, pandas Series
    if callable(to_list):
        return plain(to_list())
    item = getattr(value, "item", None)
    if callable(item):
        return plain(item())
    return value


def tests_of(value: Any) -> Any:
    """The tests object in `value` (see the module's rules); a JSON string that needs no
    change is returned as it is. Raises GroundTruthError when there are none."""
    found = _find(value, depth=0)
    if found is None:
        raise GroundTruthError(f"no tests in the ground truth: {_describe(value)}")
    return found


def column_value(columns: Mapping[str, Any], column: Optional[str] = None) -> Any:
    """The column holding ground truths among a trainer's keyword columns: `column` when
    given, else the first of `ground_truth`, `label`, `metadata`, `reward_model`."""
    if column is not None:
        if column not in columns:
            raise KeyError(f"the dataset has no {column!r} column (columns: {sorted(columns)})")
        return columns[column]
    for name in COLUMNS:
        if columns.get(name) is not None:
            return columns[name]
    raise KeyError(
        "the dataset needs a ground truth column: one of " + ", ".join(COLUMNS) + f" (columns: {sorted(columns)})"
    )


def _find(value: Any, depth: int) -> Any:
    if depth > 4:
        return None
    if isinstance(value, str):
        match = _FIRST_KEY.match(value)
        if match and match.group(1) in TEST_KEYS and "null" not in value:
            return value
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return _find(parsed, depth + 1) if isinstance(parsed, (dict, str)) else None
    value = plain(value)
    if not isinstance(value, dict):
        return None
    if any(key in value for key in TEST_KEYS):
        return value
    if isinstance(value.get("assert_case"), list):
        rest = {key: item for key, item in value.items() if key != "assert_case"}
        return dict(rest, functional=value["assert_case"])
    for key in WRAPPER_KEYS:
        inner = value.get(key)
        if key == "metadata":
            inner = inner.get("ground_truth") if isinstance(inner, dict) else None
        if inner is not None:
            return _find(inner, depth + 1)
    return None


def _describe(value: Any) -> str:
    plain_value = value if isinstance(value, str) else plain(value)
    if isinstance(plain_value, dict):
        return f"an object with keys {sorted(plain_value)}"
    text = repr(plain_value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"
