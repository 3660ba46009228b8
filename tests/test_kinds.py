"""The kinds of test are folders (stibium_py/kinds/<name>/) that each hand the layers one KindSpec through the
registry (stibium_py/registry.py); no layer imports a kind's folder, and a spec that leaves a part out fails
where it is made."""

from __future__ import annotations

import ast
import re
import dataclasses
import typing
from pathlib import Path

import pytest

from stibium_py import registry
from stibium_py.registry import KindSpec

PACKAGE = Path(registry.__file__).parent


def test_the_built_in_kinds_are_the_folders():
    folders = sorted(p.name for p in (PACKAGE / "kinds").iterdir() if (p / "__init__.py").is_file())
    assert sorted(registry.BUILTIN) == folders
    assert registry.names() == registry.BUILTIN
    assert registry.listed() == "files, pattern, replay, stream, sustained, tree or verify"


def test_a_spec_has_no_default_and_a_missing_part_fails_where_it_is_made():
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in dataclasses.fields(KindSpec))
    parts = {f.name: getattr(registry.spec("files"), f.name) for f in dataclasses.fields(KindSpec)}
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument|required positional argument"):
        KindSpec(**{k: v for k, v in parts.items() if k != "summarise"})
    with pytest.raises(TypeError, match="kind 'files': order is needed"):
        KindSpec(**{**parts, "order": None})


@pytest.mark.parametrize("kind", registry.BUILTIN)
def test_every_spec_names_its_own_kind(kind):
    spec = registry.spec(kind)
    assert spec.name == kind
    assert typing.get_args(spec.model.model_fields["kind"].annotation) == (kind,)
    # sustained: a curve, compared by its stretches; stream: counts of streams, compared side by side; verify: a
    # verdict of blocks, which compare has no ratio of
    assert spec.points is not None or kind in ("sustained", "stream", "verify")


def test_the_plan_accepts_exactly_the_kinds():
    from stibium_py.plan.model import plan_model
    union = typing.get_args(typing.get_args(typing.get_args(plan_model().model_fields["tests"].annotation)[0])[0])
    assert union == tuple(registry.spec(k).model for k in registry.BUILTIN)


def test_no_layer_imports_a_kind_folder():
    """The registry loads the folders by name; a layer that imported one would make a circle of the house."""
    importers = []
    for path in PACKAGE.rglob("*.py"):
        if (PACKAGE / "kinds") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and "kinds" in node.module.split("."):
                importers.append(str(path.relative_to(PACKAGE)))
            elif isinstance(node, ast.ImportFrom) and any(a.name == "kinds" for a in node.names):
                importers.append(str(path.relative_to(PACKAGE)))
    assert importers == []


def test_an_unknown_kind_is_named_with_the_kinds_there_are():
    with pytest.raises(KeyError, match="no kind 'disk': the kinds are files, pattern, replay, stream, sustained, tree or verify"):
        registry.spec("disk")
    assert registry.find("disk") is None


def test_a_kind_is_registered_once():
    with pytest.raises(ValueError, match="a kind named 'files' is registered already"):
        registry.register(registry.spec("files"))
    with pytest.raises(ValueError, match="'tree' is a built-in kind"):
        registry.unregister("tree")


def test_knowing_the_kinds_loads_no_statistics_and_no_report():
    """`plan show` and `run --dry-run` read every kind's model and expansion, not its analysis or views (registry.Later):
    those load scipy, statsmodels and the report; nor fio's modules, which only a run with a bench needs."""
    import subprocess
    import sys
    probe = ("import sys; from stibium_py import registry; from stibium_py.plan.model import plan_model; "
             "from stibium_py.plan.expand import expand; registry.names(); plan_model(); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'statsmodels', 'ruptures', 'plotly') "
             "or '.'.join(m.split('.')[:2]) in ('stibium_py.report', 'stibium_py.run', 'stibium_py.fio')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_points_words_come_from_its_kind():
    """A point's unit, rate format, op order and in-flight label are its kind's (PointRule), and a kind this
    stibium does not know (a stranger's series.json) gets the bytes' words."""
    from stibium_py.analysis.rates import PointKey, _op_order, label, rate_format, unit_of
    tree = PointKey("t", "list", "tree", "", 0, 0, 1, 4, None, "helper")
    pattern = PointKey("p", "read", "pattern", "random", 4096, 0, 32, 1, None, "helper")
    stranger = PointKey("s", "read", "disk", "random", 4096, 0, 32, 1, None, "helper")
    assert [unit_of(k) for k in (tree, pattern, stranger)] == ["names", "bytes", "bytes"]
    assert label(tree) == "t list T4" and label(pattern) == "p read random 4 KiB Q32T1"
    assert label(stranger) == "s read random 4 KiB Q32T1"
    assert rate_format(tree)(1500.0) != rate_format(pattern)(1500.0)
    assert _op_order(tree) == "02" and _op_order(pattern) == "read" and _op_order(stranger) == "read"


def _named_kinds(tree: ast.AST, kinds: tuple[str, ...]) -> list[tuple[int, str]]:
    """Where a module names a kind: a type or function of a kind's name (TreeShape, PatternResult, tree_args), or a
    kind's name as a string where a kind is meant: compared with a kind (`kind == "tree"`, `t.kind in (...)`), as a
    record's kind (`{"kind": "pattern"}`, `kind="pattern"`) or asked of the registry (`registry.part("verify",
    ...)`). The same words as a column, a key of a tool's options or a count (`"files"`) are not a kind."""
    found: list[tuple[int, str]] = []
    kind_type = re.compile(f"({'|'.join(k.capitalize() for k in kinds)})[A-Z_]")
    # a function named for a kind (tree_args); not files_: many a count of files is named so (files_checked)
    prefixes = tuple(f"{k}_" for k in kinds if k != "files")

    def strings(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [s for e in node.elts for s in strings(e)]
        return []

    def is_kind(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id == "kind") or \
            (isinstance(node, ast.Attribute) and node.attr == "kind")

    for node in ast.walk(tree):
        said: list[str] = []
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and \
                (kind_type.match(node.name) or node.name.startswith(prefixes)):
            said.append(node.name)
        elif isinstance(node, ast.Name) and kind_type.match(node.id):
            said.append(node.id)
        elif isinstance(node, ast.alias) and kind_type.match(node.asname or node.name.split(".")[-1]):
            said.append(node.name)
        elif isinstance(node, ast.Compare) and any(is_kind(side) for side in (node.left, *node.comparators)):
            said += [s for side in (node.left, *node.comparators) for s in strings(side) if s in kinds]
        elif isinstance(node, ast.Dict):
            said += [s for k, v in zip(node.keys, node.values) if k is not None and strings(k) == ["kind"]
                     for s in strings(v) if s in kinds]
        elif isinstance(node, ast.keyword) and node.arg == "kind":
            said += [s for s in strings(node.value) if s in kinds]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "registry" and node.args:
            said += [s for s in strings(node.args[0]) if s in kinds]
        found += [(getattr(node, "lineno", 0), s) for s in said]
    return found


def test_no_file_outside_a_kind_s_folder_names_a_built_in_kind():
    """A kind's logic is in its folder: outside `kinds/<name>/`, only registry.py names a built-in kind, as a type
    or as a kind (the constants the formats keep, such as the kind compare's JSON keeps apart, are its)."""
    named = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel == Path("registry.py"):
            continue
        own = rel.parts[1] if rel.parts[0] == "kinds" and len(rel.parts) > 2 else None
        others = tuple(k for k in registry.BUILTIN if k != own)
        named += [f"{rel}:{line}: {what}" for line, what in _named_kinds(ast.parse(path.read_text()), others)]
    assert named == []


def test_the_check_finds_a_kind_named_in_each_way_it_looks_for():
    source = ("from .kinds.tree.shape import TreeShape\n"
              "def tree_args(op): ...\n"
              "if test.kind == 'pattern': pass\n"
              "if kind in ('stream', 'files'): pass\n"
              "row = {'kind': 'sustained', 'files': 3}\n"
              "make(kind='verify')\n"
              "registry.part('verify', 'command')\n"
              "columns = ('files', 'stream')\n")
    assert sorted(_named_kinds(ast.parse(source), registry.BUILTIN)) == [
        (1, "TreeShape"), (2, "tree_args"), (3, "pattern"), (4, "files"), (4, "stream"),
        (5, "sustained"), (6, "verify"), (7, "verify")]


def test_no_second_verify_runner_is_left():
    """`stibium verify` is a plan run by the driver: no runner of its own (no signal handling, no state file)."""
    assert not (PACKAGE / "verify").exists()
    for path in (PACKAGE / "kinds" / "verify").rglob("*.py"):
        text = path.read_text()
        assert "import signal" not in text and "state.json" not in text, path
