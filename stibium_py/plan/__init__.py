"""Plans: the model a person writes (model.py), its expansion into operations (expand.py), and its bounded
reading with errors mapped to the plan's lines (load.py). The names most callers need, in one place."""

from .expand import EXPANDERS, Expanded, ExpandedTest, expand
from .load import (MAX_PLAN_BYTES, MAX_PLAN_DEPTH, MAX_PLAN_NODES, builtin_plans, builtin_plans_dir, expand_at,
                   free_bytes_at, load_and_expand, load_plan, nesting_depth, resolve_plan_path)
from .model import (TEST_MODELS, Defaults, FilesTest, PatternTest, Plan, PlanError, Size, SizeRange, SustainedTest,
                    Where)

__all__ = ["EXPANDERS", "Expanded", "ExpandedTest", "expand", "MAX_PLAN_BYTES", "MAX_PLAN_DEPTH", "MAX_PLAN_NODES",
           "builtin_plans", "builtin_plans_dir", "expand_at", "free_bytes_at", "load_and_expand", "load_plan", "nesting_depth",
           "resolve_plan_path", "TEST_MODELS", "Defaults", "FilesTest", "PatternTest", "Plan", "PlanError", "Size",
           "SizeRange", "SustainedTest", "Where"]
