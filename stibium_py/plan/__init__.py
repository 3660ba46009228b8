"""Plans: the model a person writes (model.py), its expansion into operations (expand.py), its bounded
reading with errors mapped to the plan's lines (load.py), and finding a plan by path or name (find.py). The
names most callers need, in one place, each loaded from its module when first asked for (PEP 562), so that
naming a light one (find.py's) does not load pydantic and the expansion."""

from __future__ import annotations

import importlib
from typing import Any

_FROM = {
    # the function expand is not here: stibium_py.plan.expand names its module (import it from there)
    "expand": ("Expanded", "ExpandedTest"),
    "load": ("MAX_PLAN_BYTES", "MAX_PLAN_DEPTH", "MAX_PLAN_NODES", "expand_at", "free_bytes_at", "load_and_expand",
             "load_plan", "nesting_depth"),
    "find": ("builtin_plans", "builtin_plans_dir", "resolve_plan_path"),
    "model": ("Defaults", "Plan", "PlanError", "Size", "SizeRange", "Where", "kind_models", "plan_model"),
}
_MODULE_OF = {name: module for module, names in _FROM.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
