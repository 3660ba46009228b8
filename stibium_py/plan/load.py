"""Reading a plan: the file found (a path or a built-in plan's name), its reading bounded before any parsing
(size, nesting, values, no anchors), validation by the model, and pydantic's errors mapped to one line
with the plan's file, line and key."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ..registry import listed
from ..paths import PathError, existing_part
from ..beside import read_beside
from .expand import Expanded, PlanFiles, expand
from .find import PLANS_DIR_NAME, builtin_plans, builtin_plans_dir, resolve_plan_path  # noqa: F401
from .model import Defaults, Plan, PlanError, SizeRange, kind_models, plan_model

_ANY_TEST = object()     # _allowed_keys: at a test of a kind not yet known

# A plan is untrusted input (pasted in forums, attached to bug reports): its reading is bounded before any
# parsing. The built-in plans are under 3 KB and the largest plan a person writes by hand a few dozen KB,
# so 256 KiB is generous, and small enough that reading it stays quick.
MAX_PLAN_BYTES = 256 * 1024
# Nesting: a plan is 5 levels deep (tests, a test, sizes, a range); 32 leaves room and keeps the parser's
# recursion far from Python's limit.
MAX_PLAN_DEPTH = 32
# Values in the whole document (keys, scalars, lists), counted while the document is read.
MAX_PLAN_NODES = 100_000


def _line_of(data: Any, loc: tuple) -> int | None:
    """The YAML line (1-based) of the deepest key of `loc` that exists in the document."""
    line = None
    node = data
    for key in loc:
        try:
            if isinstance(key, int) and hasattr(node, "lc") and isinstance(node, list):
                line = node.lc.item(key)[0] + 1
                node = node[key]
            elif isinstance(key, str) and hasattr(node, "lc") and isinstance(node, dict) and key in node:
                line = node.lc.key(key)[0] + 1
                node = node[key]
            elif isinstance(key, str) and isinstance(node, dict) and key in kind_models():
                continue  # the discriminator's tag in pydantic's location
            else:
                break
        except (KeyError, IndexError, AttributeError, TypeError):
            break
    return line


_ALIASES = {"from_": "from"}


def _key_path(loc: tuple) -> str:
    out = ""
    for key in loc:
        if isinstance(key, int):
            out += f"[{key}]"
        elif key in kind_models() or key.startswith(("function-", "list[", "union[", "literal[", "int", "str", "float")):
            continue
        else:
            out += ("." if out else "") + _ALIASES.get(key, key)
    return out or "(top level)"


def _allowed_keys(loc: tuple) -> list[str]:
    """Valid keys at the place of an unknown key, for a suggestion."""
    models = kind_models()
    model: Any = Plan
    for key in loc[:-1]:
        if isinstance(key, int) or key in models:
            if key in models:
                model = models[key]
            continue
        info = getattr(model, "model_fields", {}).get(key)
        if info is None:
            break
        if key == "defaults":
            model = Defaults
        elif key == "tests":
            model = _ANY_TEST
        elif key == "sizes" or key == "granularities":
            model = SizeRange
    if model is _ANY_TEST:
        fields = {f for kind in models.values() for f in kind.model_fields}
    else:
        fields = set(getattr(model, "model_fields", {}))
    return sorted(_ALIASES.get(f, f) for f in fields)


def _message(err: dict[str, Any]) -> str:
    error = err["type"]
    loc = err["loc"]
    if error == "extra_forbidden":
        allowed = _allowed_keys(loc)
        near = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        return f"unknown key '{loc[-1]}'; {hint}allowed: {', '.join(allowed)}"
    if error == "missing":
        return "is required"
    if error == "literal_error":
        return f"must be {err['msg'].removeprefix('Input should be ')} (not {err['input']!r})"
    if error == "union_tag_invalid":
        if not isinstance(err["input"], dict):
            return err["msg"]
        return f"kind must be {listed(quoted=True)}, not {err['input'].get('kind')!r}"
    if error == "union_tag_not_found":
        return f"needs a kind: {listed()}"
    if isinstance(err["input"], bool) and error in ("int_type", "float_type", "string_type"):
        return f"takes a number or a value with its unit (such as 30s or 4KiB), not {str(err['input']).lower()}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{msg} (got {err['input']!r})" if error not in ("value_error",) and not isinstance(err["input"], dict) else msg


def _read_plan_text(path: Path) -> str:
    """The plan file's text, refused before parsing when it is larger than a plan can sensibly be or is not
    UTF-8 text."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PLAN_BYTES + 1)
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan: {e.strerror or e}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: larger than {MAX_PLAN_BYTES // 1024} KiB; a plan is a few KB of YAML (the "
                        f"built-in ones are under 3 KB): is this the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PlanError(f"{path}: not UTF-8 text (byte {e.start} is 0x{data[e.start]:02x}); save the plan as UTF-8") from None


def nesting_depth(text: str) -> int:
    """An upper bound of the YAML nesting depth, by a scan of indentation, leading dashes and brackets
    (outside quotes and comments), cheap enough to run before the parser."""
    deepest, flow, indents = 0, 0, []
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(body)
        if flow == 0:
            while indents and indents[-1] >= indent:
                indents.pop()
            indents.append(indent)
        dashes = 0
        while body.startswith("- ") or body == "-":
            dashes += 1
            body = body[2:].lstrip(" ")
        quote = None
        for i, ch in enumerate(body):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (i == 0 or body[i - 1] in " \t"):
                break
            elif ch in "[{":
                flow += 1
                deepest = max(deepest, len(indents) + dashes + flow)
            elif ch in "]}":
                flow = max(0, flow - 1)
        deepest = max(deepest, len(indents) + dashes + flow)
    return deepest


def load_plan(source: str | Path, text: str | None = None) -> tuple[Plan, str]:
    """Read and validate a plan; returns it and its text. Raises PlanError. Bounded in time and memory
    whatever the file holds: its size and nesting are checked before parsing, and anchors and aliases are
    refused before anything is expanded."""
    path = Path(source)
    if text is None:
        text = _read_plan_text(path)
    elif len(text.encode("utf-8", errors="replace")) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: larger than {MAX_PLAN_BYTES // 1024} KiB; a plan is a few KB of YAML")
    depth = nesting_depth(text)
    if depth > MAX_PLAN_DEPTH:
        raise PlanError(f"{path}: nested {depth} levels deep; a plan needs about 5 and at most {MAX_PLAN_DEPTH} "
                        f"are read")
    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise PlanError(f"{path}{line}: not valid YAML: {problem}") from None
    except Exception as e:  # ruamel raises a few non-YAMLError types on odd input
        raise PlanError(f"{path}: not valid YAML: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{path}: a plan is a mapping with name, tests and other keys; see `stibium plan show quick`")
    plain = _Plain(path)(data)
    try:
        plan = plan_model().model_validate(plain)
    except ValidationError as e:
        rank = {"extra_forbidden": 0, "missing": 2}
        # unknown keys first, then the most specific place (a union's right branch is the deeper one)
        first = sorted(e.errors(), key=lambda err: (rank.get(err["type"], 1), -len(err["loc"])))[0]
        line = _line_of(data, first["loc"])
        where = f"{path}:{line}" if line else str(path)
        raise PlanError(f"{where}: {_key_path(first['loc'])}: {_message(first)}") from None
    return plan, text


class _Plain:
    """ruamel's round-trip types as plain dicts, lists and scalars; refuses anchors and aliases (a small
    file whose aliases nest expands exponentially), and counts the values it makes."""

    def __init__(self, path: Path):
        self.path = path
        self.nodes = 0

    def __call__(self, node: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_PLAN_NODES:
            raise PlanError(f"{self.path}: more than {MAX_PLAN_NODES:,} values; a plan has a few hundred")
        if depth > MAX_PLAN_DEPTH:
            raise PlanError(f"{self.path}: nested more than {MAX_PLAN_DEPTH} levels deep")
        anchor = getattr(getattr(node, "anchor", None), "value", None)
        if anchor:
            line = _node_line(node)
            raise PlanError(f"{self.path}{':' + str(line) if line else ''}: anchors and aliases (&{anchor}, "
                            f"*{anchor}) are not allowed in plans: write each value out")
        if isinstance(node, dict):
            return {str(k): self(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self(v, depth + 1) for v in node]
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            return float(node)
        return str(node)


def _node_line(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else None


def free_bytes_at(target: str | Path) -> int | None:
    """The free space of the file system a target is (or will be created) on; None where it cannot be read."""
    try:
        return shutil.disk_usage(existing_part(Path(target), "target", "choose another")).free
    except (PathError, OSError):
        return None


def load_and_expand(source: str | Path, seed: int | None = None,
                    target: str | Path | None = None) -> tuple[Plan, str, Expanded]:
    """Load, validate and expand, with the plan's location in every error. A sustained test's
    fraction_of_free is taken of the free space of `target` (default: the plan's)."""
    plan, text = load_plan(source)
    return plan, text, expand_at(source, plan, text, seed, target)


def beside_plan(folder: Path) -> PlanFiles:
    """The files a plan names, read from its folder (beside.read_beside)."""
    return lambda test, given, what, cap_bytes, named: read_beside(folder, given, what, cap_bytes, named)


def expand_at(source: str | Path, plan: Plan, text: str, seed: int | None = None,
              target: str | Path | None = None, clients: int = 1, files: PlanFiles | None = None) -> Expanded:
    """A plan read once, expanded against the target's free space now (each run of a series takes a
    sustained test's fraction_of_free of the space free when it starts; with many clients, each client
    takes its share of it), with the plan's line in errors. The files it names are read beside it, or by `files`
    (a run directory's kept copies: run.jobs.kept_files)."""
    free = None
    if any(getattr(t, "fraction_of_free", None) is not None for t in plan.tests):     # a share of the space free
        free = free_bytes_at(target if target is not None else plan.target)
        free = None if free is None else free // clients
    try:
        return expand(plan, seed, free, files or beside_plan(Path(source).parent))
    except PlanError as e:
        line = _line_of(YAML(typ="rt").load(text), e.loc) if e.loc else None
        raise PlanError(f"{source}{':' + str(line) if line else ''}: {e}") from None
