"""What a test by rounds (a plan's `steady`) adds to the report: a line on its verdict for the terminal with a
line per point (its rate over the window, the Theil-Sen slope a round with its interval, PTS's range and
excursion), and for the page the rounds drawn with the window marked and the verdict in the title, and the
same numbers as a table. Draws `Steadiness` (analysis/steady.py); computes nothing."""

from __future__ import annotations

from ...report import plot

from .result import PatternResult
from .steady import PointRounds, Steadiness, SteadyVerdict
from ...units import format_rate
from ...report.figures import layout
from ...report.page import esc, table


def verdict(name: str, st: Steadiness) -> str:
    """t: steady over rounds 5-14 (window 10, at most 25 rounds)"""
    first, last = st.window_rounds
    if st.steady:
        return f"{name}: steady over rounds {first}-{last} (window {st.window}, at most {st.max_rounds} rounds)"
    return f"{name}: not steady after {st.rounds} of at most {st.max_rounds} rounds (window {st.window})"


def verdict_line(name: str, st: Steadiness) -> str:
    """The verdict and the rounds the rates are of."""
    first, last = st.window_rounds
    return verdict(name, st) + ("; the rates are of those rounds" if st.steady else
                                f"; the rates are of rounds {first}-{last}")


def _slope(v: SteadyVerdict, digits: int) -> tuple[str, str]:
    """The slope a round as a share of the window's mean, and its interval: ("+0.3%", "[-0.6%, +1.1%]")."""
    share = (lambda x: f"{x / v.mean:+.{digits}%}")
    return share(v.slope_per_round), f"[{share(v.slope_low)}, {share(v.slope_high)}]"


def _slope_text(p: PointRounds) -> str:
    """The window's mean, the slope a round as a share of it with its interval, PTS's two figures."""
    v = p.verdict
    if v is None:
        return "no verdict (fewer rounds than the window)"
    slope, interval = _slope(v, 1)
    return (f"{format_rate(v.mean)}, slope {slope} a round {interval}, range {v.range_fraction:.1%}, least-squares "
            f"excursion {v.excursion_fraction:.1%}{'' if v.steady else '; ' + v.why}")


def terminal_lines(e: PatternResult) -> list[str]:
    st = e.steady
    if st is None:
        return []
    return [verdict_line(f"{e.name} {e.op}", st)] + [f"  {p.label(e.name)}: {_slope_text(p)}" for p in st.points]


def _points(entries: list[PatternResult]) -> tuple[Steadiness | None, list[PointRounds]]:
    """The test's verdict (one for all its ops) and every op's points."""
    judged = [e.steady for e in entries if e.steady is not None]
    return (judged[0] if judged else None), [p for st in judged for p in st.points]


def rounds_figure(entries: list[PatternResult]) -> plot.Figure | None:
    """Each point's rate round by round, the window shaded, the verdict in the title."""
    st, pts = _points(entries)
    if st is None:
        return None
    name = entries[0].name
    fig = plot.Figure()
    for p in pts:
        rounds = list(range(1, len(p.rates_bytes_per_s) + 1))
        fig.add_trace(plot.Scatter(x=rounds, y=list(p.rates_bytes_per_s), mode="lines+markers",
                                 name=esc(p.label(name)), hovertemplate="round %{x}: %{y:.4s}B/s<extra></extra>"))
    first, last = st.window_rounds
    fig.add_vrect(x0=first - 0.5, x1=last + 0.5, fillcolor="green" if st.steady else "orange", opacity=0.12,
                  line_width=0, annotation_text="steady window" if st.steady else "last window, not steady",
                  annotation_position="top left")
    fig = layout(fig, verdict(name, st), "round", "rate (B/s)")
    most = max((len(p.rates_bytes_per_s) for p in pts), default=0)
    fig.update_xaxes(tickformat="d", **({"dtick": 1} if most <= 20 else {}))      # whole rounds
    return fig


def section(entries: list[PatternResult]) -> str:
    """The verdict and each point's numbers as a table; "" for a test of trials."""
    st, pts = _points(entries)
    if st is None:
        return ""
    name = entries[0].name
    rows = []
    for p in pts:
        v = p.verdict
        rows.append([p.label(name), "yes" if v is not None and v.steady else "no",
                     *([format_rate(v.mean), *_slope(v, 2), f"{v.range_fraction:.1%}",
                        f"{v.excursion_fraction:.1%}", v.why or "-"] if v is not None else ["-"] * 6)])
    return (f"<h3>Rounds until steady</h3><p>{esc(verdict_line(name, st))}.</p><p class=\"muted\">Each round "
            f"measures every point once. A window of rounds is steady (SNIA PTS) where the rate's range is within 20 % "
            f"of its mean and its least-squares line moves at most 10 % of the mean across the window; stibium also "
            f"asks that the Theil-Sen slope's 95 % interval (Sen's, exact) moves at most 10 % across it, so that a "
            f"drift the noise hides is not called steady. Every point must be steady in the same window; the rates "
            f"above are the medians of its rounds.</p>"
            + table(["point", "steady", "mean in window", "slope a round", "its 95 % interval", "range",
                     "least-squares excursion", "why not"], rows))
