"""Finding a plan: a path to a YAML file, or the name of a built-in plan. Light (no parsing, no pydantic), so
that shell completion and the command line's start-up can list the built-in plans without loading the
plan model."""

from __future__ import annotations

from pathlib import Path

from ..errors import PathError, PlanError
from ..paths import existing_part

PLANS_DIR_NAME = "plans"


def builtin_plans_dir() -> Path:
    """The built-in plans: installed inside the package, or plans/ beside it in a checkout."""
    installed = Path(__file__).resolve().parent.parent / PLANS_DIR_NAME
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent.parent / PLANS_DIR_NAME


def builtin_plans() -> dict[str, Path]:
    folder = builtin_plans_dir()
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))} if folder.is_dir() else {}


def plan_description(path: Path) -> str:
    """A built-in plan's `description:` line, read without parsing the plan (they are checked by the tests and
    by `stibium plan check`); "" where it has none."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("description:"):
            text = line.split(":", 1)[1].strip()
            return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text
    return ""


def resolve_plan_path(name_or_path: str) -> Path:
    """PLAN is a path to a YAML file or the name of a built-in plan."""
    path = Path(name_or_path)
    if "/" in name_or_path or path.suffix in (".yaml", ".yml"):
        try:
            existing_part(path, "plan", "give the path of a plan file, or a built-in plan's name")
        except PathError as e:
            raise PlanError(str(e)) from None
    if path.is_file():
        return path
    plans = builtin_plans()
    if name_or_path in plans:
        return plans[name_or_path]
    if path.suffix in (".yaml", ".yml") or "/" in name_or_path:
        raise PlanError(f"{name_or_path}: no such plan file")
    import difflib         # here, not at the top: a completion TAB imports this module and never asks
    near = difflib.get_close_matches(name_or_path, list(plans), n=1)
    hint = f"did you mean '{near[0]}'? " if near else ""
    raise PlanError(f"{name_or_path}: not a plan file or a built-in plan; {hint}`stibium plans` lists the built-in ones")
