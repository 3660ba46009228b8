"""The kinds of test are declared once (stibium_py/kinds.py); every table keyed by kind names all of them."""

from __future__ import annotations

import importlib
import typing

import pytest

from stibium_py import kinds

# every module that holds a table keyed by kind: importing them records their tables
MODULES = ("stibium_py.op", "stibium_py.plan.model", "stibium_py.plan.expand", "stibium_py.run.orders",
           "stibium_py.cli", "stibium_py.analysis.rates", "stibium_py.analysis.summary", "stibium_py.analysis.warnings",
           "stibium_py.report.build", "stibium_py.report.compare_page")
# the tables each layer must hold: one removed, or a layer that stops recording its own, fails here
LAYERS = {"op: requests in a span of a laid-out file", "plan: the model of a test", "plan: the expansion into operations",
          "runner: the order of a test's operations", "cli: what plan show says of a test",
          "analysis: a kind's points and their estimator", "analysis: the summary of a test and op",
          "analysis: a kind's warnings", "report: a kind's sections of the report",
          "report: the compare page's figure of a test's points"}


def _tables() -> dict[str, typing.Mapping[str, object]]:
    for name in MODULES:
        importlib.import_module(name)
    return kinds.TABLES


def test_every_layer_holds_its_table():
    assert LAYERS <= set(_tables())


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_every_table_names_every_kind(layer):
    assert kinds.missing(_tables()[layer]) == [], f"{layer}: add an entry for each kind (docs/architecture.md)"


def test_the_plan_accepts_exactly_the_kinds():
    from stibium_py.plan.model import TEST_MODELS, TestSpec
    union = typing.get_args(typing.get_args(TestSpec)[0])
    assert union == tuple(TEST_MODELS.values())
    assert [typing.get_args(m.model_fields["kind"].annotation)[0] for m in union] == list(kinds.KINDS)


def test_a_table_missing_a_kind_is_found():
    entries = {k: None for k in kinds.KINDS if k != "pattern"} | {"disk": None}
    assert kinds.missing(entries) == ["pattern", "disk (no such kind)"]


def test_the_report_places_every_kind():
    from stibium_py.report.build import PAGE_ORDER
    assert sorted(PAGE_ORDER) == sorted(kinds.KINDS)
