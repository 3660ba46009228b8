"""The kinds of test, each one folder (stibium_py/kinds/<name>/) that hands the layers one KindSpec. The layers
that treat kinds differently (the plan's model and expansion, the driver's order, the summary, warnings and
points, the report's sections, the compare page, `plan show`) ask this registry by a test's kind and never
import a kind's folder; a kind's folder imports the layers' shared bases. So the registry sits at the bottom of
the house and the kind folders at the top, with no arrow up between them: the built-in kinds are imported
here, by name, the first time a layer asks (`_builtin`), as a plug-in is.

Adding a kind: its folder, and its name in BUILTIN (docs/architecture.md, "Adding a kind of test"). A test may
register a kind of its own (`register`) and take it back (`unregister`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterator, Protocol

# a kind's name, as plans write it (`kind: files`) and measurements.csv carries it
Kind = str

class KindResult(Protocol):
    """What every kind's result is to the layers that hold results of any kind (the summary, its warnings, the
    report's table): its kind, its test and op, and its JSON form. Each kind's result class (a files test's
    FilesResult, a plug-in's own) has these and whatever else its own folder reads."""

    @property
    def kind(self) -> str: ...          # the kind's name, as spec() takes it

    @property
    def name(self) -> str: ...          # the plan's test

    @property
    def op(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


# how a kind's warnings hook says a warning or a note: (level, "test (op)", message, what to do)
AddNotice = Callable[[str, str, str, str], None]

# the kind folders of stibium_py/kinds, in the order the report's page shows their sections
BUILTIN: tuple[str, ...] = ("files", "sustained", "pattern", "tree", "stream", "replay", "verify")
# the kind whose pairs compare's JSON and the series summary's keep under a key of their own, as the formats had them
# before kinds compared and put together their own results (every other kind's are under "kinds")
KEPT_APART = "sustained"
# the kind whose tests fio runs beside stibium's helper (`bench: fio`) and whose rows an imported fio result becomes
BENCHED = "pattern"
# the kind `stibium verify` runs (its command's plan and verdict: kinds/verify/command.py), and whose run directories
# an earlier stibium wrote its own way (kinds/verify/earlier/)
VERIFY = "verify"


@dataclass(frozen=True)
class KindSpec:
    """Everything a layer needs of one kind. No field has a default: a kind that leaves a part out fails where
    its folder builds its spec, at import, not in the middle of a run."""

    name: str
    home: str                       # the module whose SPEC it is (a worker process imports it to know the kind)
    model: type                     # plan: the pydantic model of its test, `kind: Literal[name]`
    # plan: (test, where, settings, first seq, free bytes) -> its operations (plan/expand.ExpandedTest); the types
    # of the layers above are not named here, at the bottom of the house
    expand: Callable[..., Any]
    spanned: bool                   # op: its requests fall in a span of a file laid out beforehand
    aggregated: bool                # many clients: every client's rows of an operation are one step of the store
                                    # (analysis/clients.aggregate); False: its analysis reads each client's rows
                                    # (a stream's frames, each client's own deadlines)
    order: Any                      # run: the order of its operations (run.orders.Order)
    plan_note: Callable[[Any], str] | None     # cli: what `plan show` says of a test beyond its operations
    # analysis: (name, op, its valid measurements, context) -> its results (KindResult), later
    summarise: Callable[..., Any]
    points: Any                     # analysis: how its measurements become points (rates.PointRule), or None
    warnings: Callable[[Any, AddNotice], None]  # analysis: (its result, add) -> the warnings of its result
    below: Callable[[Any], str | None] | None  # analysis: (its result) -> how many of its reads met a cache below
                                               # the file system (memory speed, nothing in the page cache), in
                                               # words, or None; None here: a kind whose reads are not judged so
    view: Any                       # report: its sections, headline, counts and terminal lines (build.KindView)
    overlay: Callable[..., Any] | None         # report: the compare page's figure of its points (or a sentence
                                               # where a figure would show nothing), or None: no points
    compare: Callable[..., Any] | None         # compare: (A's runs' rows, B's, settings) -> its own pairs of the two
                                               # sides (each with its test's name, `test`),
                                               # the tests only A ran and only B ran (drawn by its view's
                                               # compare_lines and compare_section), or None: points, or none
    series: Callable[..., Any] | None          # series: (each run's name and rows, settings) -> its tests across the
                                               # runs, as JSON (drawn by its view's series_lines and
                                               # series_section), or None: points, or none
    history: Callable[..., Any] | None         # history: (its rows, settings) -> the rates a history keeps of it
                                               # beyond points, each (label, key, unit, Estimate, n), or None
    # analysis: (every valid row of a run) -> the rows its rates are of (a pattern test by rounds keeps the rounds
    # of its steady window) and its verdicts by test (each with `steady`), which every view rates alike (the
    # summary, compare, a series), or None: every row is rated
    rated: Callable[..., tuple[Any, dict[str, Any]]] | None
    # run: (its expanded test, the target, the clients, the plan's name) -> why the target cannot hold it (a tree's
    # names, paths and inodes), checked with the rest before anything is written, or None; None here: nothing
    refusal: Callable[..., str | None] | None

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name not in ("plan_note", "points", "below", "overlay", "compare", "series", "history", "rated",
                              "refusal") and \
                    getattr(self, f.name) is None:
                raise TypeError(f"kind {self.name!r}: {f.name} is needed")


class Later:
    """A part of a kind imported the first time it is used (`module`'s `attribute`): a kind's analysis, order and
    views load scipy, statsmodels and the report, which `plan show` and `--dry-run` do without. Called, it calls
    the part; asked for an attribute, it gives the part's."""

    def __init__(self, module: str, attribute: str | None):
        self._where = (module, attribute)
        self._part: Any = None

    def _load(self) -> Any:
        if self._part is None:
            module, attribute = self._where
            found = importlib.import_module(module)
            self._part = getattr(found, attribute) if attribute is not None else found
        return self._part

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._load(), name)

    def __repr__(self) -> str:
        return f"Later({'.'.join(w for w in self._where if w)})"


def folder_spec(home: str, model: type, spanned: bool, plan_note: bool, points: bool,
                aggregated: bool, compare: bool = False, series: bool = False, history: bool = False,
                below: bool = False, rated: bool = False, refusal: bool = False) -> KindSpec:
    """The spec of a kind folder laid out as the built-in ones are (docs/architecture.md): `expand.expand_test`,
    `order.ORDER`, `analysis.summarise`, `analysis.add_warnings`, `view.VIEW`, and where the kind has them
    `view.plan_note`, `analysis.POINTS` and `view.overlay` (a kind with points draws them on the compare page), and
    `analysis.below_reads` (a kind whose reads are judged against memory speed), `compare.pairs` (a kind without
    points that compares its own results), `series.across_runs` (one that puts
    its own results of a series together), `history.rates` (one whose rates a history keeps) and `steady.rated` (one
    that rates some of its rows only) and `preflight.refusal` (one that checks the target beyond the run's checks), each
    imported
    when first used. `home` is the folder's package (its
    `__name__`), whose last part is the kind's name."""
    def part(module: str, attribute: str) -> Later:
        return Later(f"{home}.{module}", attribute)
    return KindSpec(name=home.rsplit(".", 1)[-1], home=home, model=model, expand=part("expand", "expand_test"),
                    spanned=spanned, aggregated=aggregated, order=part("order", "ORDER"),
                    plan_note=part("view", "plan_note") if plan_note else None,
                    summarise=part("analysis", "summarise"), points=part("analysis", "POINTS") if points else None,
                    warnings=part("analysis", "add_warnings"), below=part("analysis", "below_reads") if below else None,
                    view=part("view", "VIEW"),
                    overlay=part("view", "overlay") if points else None,
                    compare=part("compare", "pairs") if compare else None,
                    series=part("series", "across_runs") if series else None,
                    history=part("history", "rates") if history else None,
                    rated=part("steady", "rated") if rated else None,
                    refusal=part("preflight", "refusal") if refusal else None)


_KINDS: dict[str, KindSpec] = {}
_loaded = False


def _builtin() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for name in BUILTIN:
            spec = importlib.import_module(f"stibium_py.kinds.{name}").SPEC
            _KINDS.setdefault(spec.name, spec)


def plugins() -> tuple[str, ...]:
    """The homes of the kinds registered beside the built-in ones: what a worker process loads (load_plugins)
    to know every kind this process knows."""
    _builtin()
    return tuple(s.home for s in _KINDS.values() if s.name not in BUILTIN)


def load_plugins(homes: tuple[str, ...]) -> None:
    """A worker process's start: the kinds its parent registered, from their homes."""
    for home in homes:
        spec = importlib.import_module(home).SPEC
        if find(spec.name) is None:
            register(spec)


def register(spec: KindSpec) -> None:
    """Add a kind (a test's own, or a plug-in's); its name must be new."""
    _builtin()
    if spec.name in _KINDS:
        raise ValueError(f"a kind named {spec.name!r} is registered already")
    _KINDS[spec.name] = spec
    version[0] += 1


def unregister(name: str) -> None:
    """Take back a kind a test registered."""
    if name in BUILTIN:
        raise ValueError(f"{name!r} is a built-in kind")
    if _KINDS.pop(name, None) is not None:
        version[0] += 1


# bumped by register and unregister: what is built from the whole registry (the plan's model) is built again
version = [0]


def spec(kind: str) -> KindSpec:
    """The spec of a kind; KeyError names the kinds there are."""
    _builtin()
    try:
        return _KINDS[kind]
    except KeyError:
        raise KeyError(f"no kind {kind!r}: the kinds are {listed()}") from None


def part(kind: str, module: str, attribute: str | None = None) -> Any:
    """A part of a kind's folder beyond its spec (`stibium verify`'s command, the reader of an earlier verify's
    run directory): the module, or its attribute, imported when first used; the layers import no kind folder."""
    return Later(f"{spec(kind).home}.{module}", attribute)


def find(kind: str) -> KindSpec | None:
    """The spec of a kind, or None where there is no such kind (a stranger's measurements.csv may name one)."""
    _builtin()
    return _KINDS.get(kind)


def specs() -> Iterator[KindSpec]:
    """Every kind, built-in first, in the page's order."""
    _builtin()
    return iter(list(_KINDS.values()))


def names() -> tuple[str, ...]:
    _builtin()
    return tuple(_KINDS)


def listed(quoted: bool = False) -> str:
    """The kinds in words, as plans write them: "files, pattern, sustained or tree" (quoted: "'files', ...")."""
    kinds = sorted(names())
    out = [f"'{k}'" if quoted else k for k in kinds]
    return ", ".join(out[:-1]) + f" or {out[-1]}"
