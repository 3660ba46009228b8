"""The statistics stibium's analyses use, in one place. Most are the named libraries' own, called here so that
each analysis asks one surface for them and the library is imported only by the commands that analyse:

- quantiles (scipy.special): norm_ppf, t_ppf, binom_cdf;
- trend (scipy.stats, ruptures): kendall_tau (Mann-Kendall's test of the drift), change_points (binary
  segmentation with the l1 cost), and kendall_p_exact, Kendall's exact distribution at a given count of pairs
  out of order, which scipy computes only inside its test of two series;
- robust (scipy.stats, statsmodels): siegel (repeated medians), tukey_biweight_line (robust regression, RLM);
- theil_sen: every Theil-Sen variant the analyses draw (theil_sen_joint, the median pairwise slope computed size
  by size; fast_theil_sen_slope; row_slopes; sen_interval), each with its measured reason;
- bootstrap: every bootstrap they resample with (the stratified bootstrap of lines, medians, moving blocks, the
  two-level draws of runs);
- imports: library, how every analysis imports these libraries where it first needs them (one at a time: the
  summary's threads would otherwise import statsmodels at once, which deadlocks in Python's import system).

Own code stays where it is measurably better on stibium's data, each held to the library it stands beside by
tests/test_stats.py, with its figure in docs/methods.md: theil_sen_joint (a files test has a few sizes and
many points each, where scipy forms every pair in an n x n matrix; the same floats), kendall_p_exact
(no library surface gives it for a count)."""

from .imports import library
from .robust import siegel, tukey_biweight_line
from .theil_sen import DENSE_ABOVE_GROUPS, pair_count, sorted_groups, theil_sen_joint
from .quantiles import binom_cdf, norm_ppf, t_ppf
from .trend import change_points, kendall_p_exact, kendall_tau

__all__ = ["DENSE_ABOVE_GROUPS", "binom_cdf", "change_points", "kendall_p_exact", "kendall_tau", "library", "norm_ppf",
           "pair_count", "siegel", "sorted_groups", "t_ppf", "theil_sen_joint", "tukey_biweight_line"]
