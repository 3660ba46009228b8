"""The per-request latency histogram as the report reads it: parsed, merged over trials, as a CDF."""

from __future__ import annotations

import numpy as np
import pytest

from stibium_py.analysis.histogram import HistogramError, LatencyHistogram


def test_trials_merge_into_one_histogram_bin_by_bin():
    h = LatencyHistogram.merged(["1000-1064:3 2048-2176:1", None, "", "1000-1064:2 4096-4352:4"])
    assert h.to_text() == "1000-1064:5 2048-2176:1 4096-4352:4"
    assert h.n == 10
    assert LatencyHistogram.merged([None, ""]) is None


def test_the_cdf_rises_inside_each_bin_and_stays_flat_across_empty_ones():
    h = LatencyHistogram.parse("1000-1064:5 2048-2176:1 4096-4352:4")
    x, y = h.cdf()
    assert x.tolist() == [1e-6, 1.064e-6, 2.048e-6, 2.176e-6, 4.096e-6, 4.352e-6]
    assert y.tolist() == pytest.approx([0.0, 0.5, 0.5, 0.6, 0.6, 1.0])
    assert h.quantile_s(0.5) == 1.064e-6 and h.quantile_s(0.55) == 2.176e-6 and h.quantile_s(1.0) == 4.352e-6


def test_a_damaged_bin_is_refused_in_one_line():
    with pytest.raises(HistogramError, match=r"^latency histogram bin '1000-:3' is not 'lo-hi:count'$"):
        LatencyHistogram.parse("1000-1064:3 1000-:3")


def test_a_pattern_point_carries_its_trials_histogram_and_a_damaged_one_leaves_it_without():
    from stibium_py.kinds.pattern.result import points
    from stibium_py.rundir.measurement import Measurement
    from stibium_py.rundir.table import Table

    def row(seq, hist):
        return Measurement(seq=seq, test="p", op="read", kind="pattern", access="random", size_bytes=2**20,
                           granularity_bytes=4096, stride_bytes=0, trial=seq, file="p/data.bin", bytes=2**20,
                           seconds=0.01, requests=256, lat_hist_ns=hist)
    good = points(Table.from_rows([row(0, "1000-1064:200 2048-2176:56"), row(1, "1000-1064:256")]), 200, 1, 0.95)
    assert good[0].latency_hist.n == 512 and good[0].to_json()["lat_hist_ns"] == "1000-1064:456 2048-2176:56"
    bad = points(Table.from_rows([row(0, "1000-1064:200 x"), row(1, "1000-1064:256")]), 200, 1, 0.95)
    assert bad[0].latency_hist is None and bad[0].throughput.estimate == pytest.approx(2**20 / 0.01)
    assert np.isfinite(bad[0].iops)


def test_the_cdf_figure_has_a_curve_per_granularity_and_panel_each_named_once():
    from stibium_py.kinds.pattern.result import pattern_result
    from stibium_py.rundir.measurement import Measurement
    from stibium_py.kinds.pattern import figures
    from stibium_py.rundir.table import Table

    rows = [Measurement(seq=k, test="p", op="read", kind="pattern", access=access, size_bytes=2**24,
                        granularity_bytes=g, stride_bytes=0, trial=0, file="p/data.bin", bytes=2**20, seconds=0.01,
                        requests=2**20 // g, lat_hist_ns=f"{g}-{g + 64}:{2**20 // g}")
            for k, (access, g) in enumerate((a, g) for a in ("random", "sequential") for g in (4096, 65536))]
    result = pattern_result("p", "read", Table.from_rows(rows), 200, 1, 0.95)
    fig = figures.latency_cdf([result])
    assert len(fig.data) == 4                                    # 2 granularities x 2 panels
    assert sorted(t.name for t in fig.data if t.showlegend) == ["4 KiB", "64 KiB"]
    assert all(t.y[-1] == 1.0 and t.y[0] == 0.0 for t in fig.data)
