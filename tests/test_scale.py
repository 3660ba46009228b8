"""Large runs: the columnar reader reads what the row reader reads, and a test above the density
threshold is drawn as densities that count every measurement, with every flagged one drawn one by one.
(How fast and how small is measured by tests/bench/bench_analysis.py, bench_compare.py and
bench_report_browser.py, not here.)"""

from __future__ import annotations

import numpy as np

from stibium_py.kinds.files.result import files_result
from stibium_py.analysis.settings import Settings
from stibium_py.rundir.measurement import Measurement
from stibium_py.kinds.files import figures
from stibium_py.rundir.csvread import _read_columns, _read_rows
from stibium_py.rundir.table import Table
from synthetic import make_run


def _reads(n: int, seed: int = 3) -> Table:
    """n whole-file reads of 7 sizes at 500 MB/s; every 100th served from the page cache (resident), every
    150th slowed down five times."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice(np.geomspace(1e6, 64e6, 7).round(), n).astype(int)
    seconds = (2e-4 + sizes / 5e8) * np.exp(rng.normal(0, 0.03, n))
    resident = np.zeros(n)
    resident[::100] = 1.0
    seconds[::100] /= 20
    seconds[75::150] *= 5
    return Table.from_rows(
        Measurement(seq=k, test="f", op="read", kind="files", access="sequential", size_bytes=int(s),
                    granularity_bytes=int(s), stride_bytes=0, trial=k, file=f"f{k}", bytes=int(s), seconds=float(t),
                    started_s=k * 0.01, resident_before=float(r), engine="direct", requests=1)
        for k, (s, t, r) in enumerate(zip(sizes, seconds, resident)))


def test_the_columnar_reader_reads_what_the_row_reader_reads(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    lines = (run / "measurements.csv").read_text().splitlines(keepends=True)
    lines[7] = lines[7].replace(",direct,", ',"direct, quoted",')       # a quoted value with a comma
    (run / "measurements.csv").write_text("".join(lines))
    data = (run / "measurements.csv").read_bytes()
    header = data.split(b"\n", 1)[0].decode().split(",")
    table, damaged = _read_columns(data, header)         # called itself: a file this small is read row by row
    rows, row_damaged = _read_rows(data, header)
    assert table.rows() == rows and damaged == row_damaged == 0
    assert table.row(6).engine == "direct, quoted"
    assert table.row(0).engine_requested is None and np.isnan(table.syscalls).all()


def test_a_dense_test_counts_every_measurement_and_draws_every_flagged_one():
    n = figures.DENSITY_ABOVE_POINTS + 2000
    e = files_result("f", "read", _reads(n), Settings(resamples=200))
    flagged = set(e.flagged_any)
    assert flagged == set(e.outliers) | set(e.cache_suspects) | set(e.fast_outliers)
    assert figures.dense(e) and len(e.cache_suspects) >= n // 100 - 5 and len(flagged) > n // 100
    seqs = e.measurements.seq
    for make in (figures.time_vs_size, figures.residuals, figures.rate_vs_size, figures.rate_vs_elapsed):
        fig = make(e)
        heat = [t for t in fig.data if t.type == "heatmap"]
        assert len(heat) == 1 and int(np.asarray(heat[0].customdata).sum()) == n, make.__name__
    drawn = [t for t in figures.residuals(e).data if t.type in ("scatter", "scattergl") and t.customdata is not None]
    shown = {int(row[0]) for t in drawn for row in np.asarray(t.customdata)}
    assert shown == {int(seqs[k]) for k in flagged}                        # every flagged one, with its hover


def test_a_density_counts_every_point_in_the_cell_a_search_among_its_edges_finds():
    """The cells numpy's histogram2d gives, where it places every point; and every point where it does not (the
    smallest or the largest value dropped when 10 to the power of its logarithm comes out beyond it)."""
    from stibium_py.report.figures import density
    rng = np.random.default_rng(5)
    n = 200_000
    x = rng.choice(np.geomspace(1e4, 2e9, 14).round(), n)                   # few distinct: a cell each
    y = (1e-4 + x / 5e8) * np.exp(rng.normal(0, 0.05, n))                   # many: evenly in the logarithm
    elapsed = np.arange(n) * 0.01
    for a, b, log_a, log_b in ((x, y, True, True), (elapsed, x / y, False, True), (y, elapsed, True, False)):
        trace = density(a, b, log_a, log_b)
        counts = np.asarray(trace.customdata)
        assert counts.sum() == n and f"density of {n:,} measurements" in trace.name
        searched = np.histogram2d(a, b, bins=[np.asarray(trace.x), np.asarray(trace.y)])[0].T
        if searched.sum() == n:
            assert (counts == searched).all()
        else:                               # each point numpy dropped is in a cell at an end of an axis
            extra = counts - searched
            assert (extra >= 0).all() and extra.sum() == n - searched.sum() and extra[1:-1, 1:-1].sum() == 0
    assert np.asarray(density(np.array([]), np.array([]), True, True).customdata).sum() == 0


def test_below_the_threshold_every_measurement_is_a_point():
    e = files_result("f", "read", _reads(600), Settings(resamples=200))
    fig = figures.time_vs_size(e)
    assert not any(t.type == "heatmap" for t in fig.data)
    points = [t for t in fig.data if t.mode == "markers"]
    assert sum(len(t.x) for t in points) == 600 and all(t.text is not None for t in points)


def test_the_files_tests_in_parallel_give_the_same_summary(tmp_path):
    from stibium_py.analysis.settings import SUMMARY
    from stibium_py.analysis.summary import summarize
    from stibium_py.results.pipeline import summarize_run
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8, repeats=6, trials=4)
    _, table, parallel = summarize_run(run)                       # the files tests on threads
    assert parallel.to_json() == summarize(table, SUMMARY).to_json()


def test_beyond_the_cap_the_least_extreme_flagged_points_are_a_density_of_their_own(monkeypatch):
    n = figures.DENSITY_ABOVE_POINTS + 2000
    e = files_result("f", "read", _reads(n), Settings(resamples=200))
    flagged = sorted(set(e.outliers) | set(e.cache_suspects) | set(e.fast_outliers))
    monkeypatch.setattr(figures, "FLAGGED_POINTS_DRAWN", 50)
    fig = figures.residuals(e)
    points = [t for t in fig.data if t.type in ("scatter", "scattergl") and t.customdata is not None]
    heat = [t for t in fig.data if t.type == "heatmap"]
    drawn = sum(len(t.x) for t in points)
    assert drawn == 50 and len(heat) == 2
    assert int(np.asarray(heat[1].customdata).sum()) == len(flagged) - 50      # the rest, every one counted
    worst = sorted(flagged, key=lambda k: -abs(e.log_residuals[k]))[:50]
    shown = {int(row[0]) for t in points for row in np.asarray(t.customdata)}
    assert shown == {int(e.measurements.seq[k]) for k in worst}



def test_the_bootstrap_of_many_points_spreads_as_the_exact_one():
    """Above SUBSAMPLE_POINTS the resamples are smaller and rescaled (m-out-of-n): their spread must be the
    bootstrap's own, not inflated by the pair sampling (which made it 1.27 times as wide at this size,
    and 3.2 times at 50,400 points)."""
    from stibium_py.analysis import regression
    from stibium_py.analysis.stats import bootstrap, theil_sen
    rng = np.random.default_rng(11)
    x = np.repeat(np.geomspace(1e4, 2e9, 14), 250)
    y = 1e-4 + x / 5e8 * (1 + 0.05 * rng.standard_normal(len(x)))
    slopes, intercepts = bootstrap.bootstrap_lines(x, y, 2000, 1)
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    strata = bootstrap.strata_of(xs)
    exact = [theil_sen.fast_theil_sen_slope(xs[idx], ys[idx]) for idx in (
        np.concatenate([g[rng.integers(0, len(g), len(g))] for g in strata]) for _ in range(300))]
    assert 0.88 <= np.std(slopes) / np.std(exact) <= 1.14
    line = regression.theil_sen(x, y)
    assert abs(np.median(slopes) / line.slope_s_per_byte - 1) < 1e-3        # centred on the data's line
    assert intercepts is not None and len(intercepts) == bootstrap.INTERCEPT_RESAMPLES


def _with_values_between_samples(tmp_path, monkeypatch) -> tuple[bytes, list[str]]:
    """The synthetic run's measurements.csv sampled 4 times for 1 KiB (csvread.SAMPLES), with a number and a text
    in one row between the samples, in columns no other row fills."""
    import csv
    import io
    from stibium_py.rundir import csvread
    monkeypatch.setattr(csvread, "SAMPLES", 4)
    monkeypatch.setattr(csvread, "SAMPLE_BYTES", 1024)
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    data = (run / "measurements.csv").read_bytes()
    header = next(csv.reader([data.split(b"\n", 1)[0].decode()]))
    lines = data.splitlines(keepends=True)
    starts = np.cumsum([0] + [len(line) for line in lines])
    k = int(np.argmin(abs(starts[:-1] - len(data) * 3 // 8)))          # halfway between the second sample and the third
    row = next(csv.reader([lines[k].decode()]))
    row[header.index("syscalls")], row[header.index("strerror")] = "17", "No space left on device"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(row)
    lines[k] = out.getvalue().encode()
    return b"".join(lines), header


def test_a_value_between_the_samples_is_read_as_the_row_reader_reads_it(tmp_path, monkeypatch):
    from stibium_py.rundir import csvread
    data, header = _with_values_between_samples(tmp_path, monkeypatch)
    assert {"syscalls", "strerror"} <= csvread._empty_in_samples(data, header)    # the guess is wrong: read again
    rows, row_damaged = _read_rows(data, header)
    path = tmp_path / "m.csv"
    path.write_bytes(data)
    with path.open("rb") as f:
        for source in (data, f):
            table, damaged = _read_columns(source, header)
            assert table.rows() == rows and damaged == row_damaged == 0
            assert np.nansum(table.syscalls) == 17 and "No space left on device" in set(table.strerror)


def test_a_file_whose_samples_see_every_filled_column_is_read_once(tmp_path, monkeypatch):
    from stibium_py.rundir import csvread
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    data = (run / "measurements.csv").read_bytes()
    header = data.split(b"\n", 1)[0].decode().replace('"', "").split(",")
    reads = []
    typed = csvread._read_columns_typed
    monkeypatch.setattr(csvread, "_read_columns_typed", lambda *a: reads.append(a[2]) or typed(*a))
    table, damaged = _read_columns(data, header)
    assert len(reads) == 1 and "syscalls" in reads[0] and "seconds" not in reads[0]
    assert (table.rows(), damaged) == (_read_rows(data, header)[0], 0)


def test_a_fit_of_many_points_hands_the_memory_it_freed_back(monkeypatch):
    # a million-row report fits several lines of hundreds of thousands of points at once on threads whose heaps keep
    # what they free: a fit of GIVE_BACK_FROM_POINTS or more gives it back as it ends, a smaller one does not
    # (its memory is small, and a comparison fits thousands of them)
    from stibium_py.analysis import regression
    given = []
    monkeypatch.setattr(regression, "give_back", lambda: given.append(1))
    rng = np.random.default_rng(4)
    n = regression.GIVE_BACK_FROM_POINTS
    x = rng.choice(np.geomspace(1e6, 64e6, 7).round(), n)
    y = (2e-4 + x / 5e8) * np.exp(rng.normal(0, 0.03, n))
    regression.fit_rate(x[:-1], y[:-1], 50, 1)
    assert given == []
    fit = regression.fit_rate(x, y, 50, 1)
    assert given == [1]
    assert abs(fit.rate_bytes_per_s.estimate / 5e8 - 1) < 0.01
