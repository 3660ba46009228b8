"""Property: no input makes the plan parser raise anything but its own PlanError."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stibium_py.plan import PlanError, load_and_expand

KEYS = ["name", "description", "target", "defaults", "tests", "kind", "sizes", "repeats", "op", "access",
        "granularities", "strides", "bytes", "span", "trials", "between", "write_order", "read_order", "engine",
        "fill", "units", "sync", "seed", "from", "to", "count", "factor", "layout"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.sampled_from([10**9, 10**6, 3, 2]),
                    st.floats(allow_nan=True),
                    st.sampled_from(["1MB", "4KiB", "0", "-1KB", "2GB", "random", "read", "files", "pattern",
                                     "0x41", "evict", "10XB", "", "1e3", "strided"]), st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
                      max_leaves=20)
PLANS = st.fixed_dictionaries({"name": st.one_of(st.just("p"), SCALARS),
                               "tests": st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8),
                                                 max_size=3)}).map(lambda d: d)


def _dump(value) -> str:
    import io

    from ruamel.yaml import YAML
    buf = io.StringIO()
    YAML().dump(value, buf)
    return buf.getvalue()


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(PLANS.map(_dump), st.text(max_size=200)))
def test_the_parser_raises_only_its_own_error(text):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "plan.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            load_and_expand(path)
        except PlanError as e:
            assert "\n" not in str(e)
