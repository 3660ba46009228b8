"""What a run's tests measured, from the plan recorded in run.json: each test's definition with the
plan's defaults filled in. compare matches tests by these definitions, not by the plan's name: a
difference that changes what a number means (kind, engine, sync, fill, access) is refused; any other
(sizes, repeats, trials, bytes, span, a plan's name) is listed and allowed."""

from __future__ import annotations

from typing import Any

# a different value here makes the two rates different quantities
MEANING = ("kind", "engine", "sync", "fill", "access")
# listed when they differ, and allowed: the matching itself pairs sizes and granularities
LISTED = ("op", "sizes", "repeats", "granularities", "strides", "queue_depth", "threads", "bytes", "span", "trials",
          "between", "layout", "units", "write_order", "read_order", "granularity", "file_size", "chunk",
          "fraction_of_free", "max_bytes", "read_back", "read_fraction", "duration", "warmup", "steady",
          "precondition")


def test_definitions(plan: dict[str, Any] | None) -> dict[str, dict[str, Any]] | None:
    """Per test name its definition from the plan as given (run.json plan.as_given), or None for a run
    that does not carry its plan (an older or foreign run.json)."""
    if not isinstance(plan, dict) or not isinstance(plan.get("tests"), list):
        return None
    defaults = plan.get("defaults") or {}
    out = {}
    for test in plan["tests"]:
        merged = {k: (defaults.get(k) if v is None else v) for k, v in test.items()}
        for key in ("engine", "fill"):
            merged.setdefault(key, defaults.get(key))
        # a key neither the test nor the plan's defaults give is the kind's own default: a test that leaves layout
        # out measured what one that says `layout: movie` did (compare said "movie in A, None in B")
        for key, value in _model_defaults(test.get("kind")).items():
            if merged.get(key) is None:
                merged[key] = value
        out[str(test.get("name"))] = merged
    return out


def _model_defaults(kind: Any) -> dict[str, Any]:
    """The defaults of a kind's test model for the keys compare reads, where the model has one (None: none)."""
    from .. import registry
    spec = registry.find(kind) if isinstance(kind, str) else None
    if spec is None:
        return {}
    fields = getattr(spec.model, "model_fields", {})
    return {key: f.default for key, f in fields.items()
            if key in MEANING + LISTED and isinstance(f.default, (str, int, float, bool, list))}


def differences(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]],
                tests: set[str]) -> tuple[list[str], list[str]]:
    """(differences that change what a number means, other differences), one line each, for the tests
    both runs have."""
    refused, listed = [], []
    for name in sorted(tests):
        da, db = a.get(name), b.get(name)
        if da is None or db is None:
            continue
        for key in MEANING + LISTED:
            if da.get(key) != db.get(key):
                line = f"test {name}: {key} {_show(da.get(key))} in A, {_show(db.get(key))} in B"
                (refused if key in MEANING else listed).append(line)
    return refused, listed


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return str(value)
