"""Intervals that respect how the samples were drawn and the range of what they estimate.

- :func:`clustered_rate_interval`: a proportion whose trials come in clusters (the votes of
  one name in one round share the clue and the display; the turns of one game share the
  hands). The cluster-robust variance of the ratio estimator gives a design effect
  ``deff = Var_clustered / Var_binomial``; the interval is the **Wilson** interval at the
  effective sample size ``n / deff`` (Kish). It stays inside [0, 1] and is the plain Wilson
  interval when trials are independent.
- :func:`bounded_mean_interval`: the mean of values in [0, 1] (a win share per game): the
  same Wilson-at-effective-size construction on the mean, so a tiny run gets [0.00, 0.62]
  rather than a t interval such as [-0.08, 0.80].
- :func:`paired_difference`: the mean of per-deal differences between two treatments played
  on the same deals, with a t interval and two-sided p-value (Student's t).
- :func:`holm`: Holm's step-down rejections, controlling the family-wise error rate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from scipy import special

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ClusterSums", "PairedDifference", "bounded_mean_interval", "cluster_sums",
           "clustered_rate_interval", "holm", "mean_interval_from_sums", "normal_quantile",
           "paired_difference", "rate_interval_from_sums", "student_quantile",
           "wilson_from_effective"]


def normal_quantile(probability: float) -> float:
    """The standard normal's quantile (``scipy.stats.norm.ppf``, which is this function of
    ``scipy.special``: the same floats without importing ``scipy.stats``, half a second)."""
    return float(special.ndtri(probability))


def student_quantile(probability: float, df: float) -> float:
    """Student's t quantile (``scipy.stats.t.ppf``'s own function, as
    :func:`normal_quantile`): NaN for ``df <= 0``."""
    return float(special.stdtrit(df, probability))


def wilson_from_effective(rate: float, n_effective: float,
                          confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``rate`` observed on ``n_effective`` (possibly
    fractional) independent trials. It always holds ``rate`` (at a rate of 0 or 1 the
    rounding of ``centre - half`` would leave it a hair outside)."""
    if not n_effective > 0 or not math.isfinite(rate):
        return (math.nan, math.nan)
    z = normal_quantile(0.5 + confidence / 2.0)
    n = n_effective
    denominator = 1.0 + z * z / n
    centre = (rate + z * z / (2.0 * n)) / denominator
    half = z / denominator * math.sqrt(max(rate * (1.0 - rate), 0.0) / n + z * z / (4 * n * n))
    return (max(0.0, min(centre - half, rate)), min(1.0, max(centre + half, rate)))


class ClusterSums(NamedTuple):
    """What the clustered intervals need of a sample, as sums that add up over disjoint
    parts of it (so that millions of games are summarised batch by batch): the number of
    samples, their total, the number of clusters and, over the clusters, the sum of squared
    cluster totals, of cluster total times cluster size, and of squared sizes."""

    n: float = 0.0
    total: float = 0.0
    clusters: float = 0.0
    squares: float = 0.0
    cross: float = 0.0
    sizes: float = 0.0

    def plus(self, other: ClusterSums) -> ClusterSums:
        """The sums of both samples together."""
        return ClusterSums(*(a + b for a, b in zip(self, other, strict=True)))

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    def robust_variance(self) -> float:
        """The cluster-robust variance of the mean, ``G/(G-1) * sum_g (S_g - n_g m)^2 / n^2``
        (NaN with fewer than two clusters)."""
        g, m = self.clusters, self.mean
        if g < 2:
            return math.nan
        spread = self.squares - 2.0 * m * self.cross + m * m * self.sizes
        return g / (g - 1) * max(spread, 0.0) / (self.n * self.n)


def cluster_sums(values: ArrayLike, clusters: ArrayLike | None = None) -> ClusterSums:
    """The :class:`ClusterSums` of ``values`` grouped by ``clusters`` (None: each value its
    own cluster)."""
    x = np.asarray(values, dtype=np.float64)
    if clusters is None:
        return ClusterSums(float(x.size), float(x.sum()), float(x.size), float(x @ x),
                           float(x.sum()), float(x.size))
    labels = np.asarray(clusters)
    if labels.shape != x.shape:
        raise ValueError(f"{labels.size} cluster labels for {x.size} values")
    _, group = np.unique(labels, return_inverse=True)
    totals = np.bincount(group, weights=x)
    sizes = np.bincount(group).astype(np.float64)
    return ClusterSums(float(x.size), float(x.sum()), float(len(sizes)),
                       float(totals @ totals), float(totals @ sizes), float(sizes @ sizes))


def _design_effect(sums: ClusterSums) -> float:
    """Cluster-robust variance of the mean over its Bernoulli-like variance
    ``mean (1 - mean) / n``; 1 when the latter is 0 (a rate of exactly 0 or 1)."""
    robust = sums.robust_variance()
    if not math.isfinite(robust):
        return math.nan
    mean = sums.mean
    binomial = mean * (1.0 - mean) / sums.n
    if binomial <= 0.0:
        return 1.0
    return max(robust / binomial, 1.0 / sums.n)


def rate_interval_from_sums(sums: ClusterSums, confidence: float = 0.95
                            ) -> tuple[float, float, float]:
    """``(rate, low, high)``: Wilson at the effective sample size ``n / deff`` of the
    clusters (:func:`clustered_rate_interval` and :func:`bounded_mean_interval` from sums)."""
    if not sums.n:
        return (math.nan, math.nan, math.nan)
    rate = sums.mean
    deff = _design_effect(sums)
    if not math.isfinite(deff):
        return (rate, math.nan, math.nan)
    return (rate, *wilson_from_effective(rate, sums.n / deff, confidence))


def mean_interval_from_sums(sums: ClusterSums, confidence: float = 0.95
                            ) -> tuple[float, float, float]:
    """``(mean, low, high)``: the cluster-robust t interval with ``G - 1`` degrees of freedom
    (:func:`dixit_lab.stats.metrics.mean_interval` from sums)."""
    if not sums.n:
        return (math.nan, math.nan, math.nan)
    mean = sums.mean
    variance = sums.robust_variance()
    if not math.isfinite(variance):
        return (mean, math.nan, math.nan)
    half = student_quantile(0.5 + confidence / 2.0, sums.clusters - 1) * math.sqrt(variance)
    return (mean, mean - half, mean + half)


def clustered_rate_interval(outcomes: ArrayLike, clusters: ArrayLike | None = None,
                            confidence: float = 0.95) -> tuple[float, float, float]:
    """``(rate, low, high)`` of 0/1 ``outcomes``, Wilson at the effective sample size of their
    ``clusters`` (None: independent trials, the plain Wilson interval)."""
    x = np.asarray(outcomes, dtype=np.float64)
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    if clusters is None:
        rate = float(x.mean())
        return (rate, *wilson_from_effective(rate, float(x.size), confidence))
    return rate_interval_from_sums(cluster_sums(x, clusters), confidence)


def bounded_mean_interval(values: ArrayLike, clusters: ArrayLike | None = None,
                          confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` of values in [0, 1]; the interval stays in [0, 1] (see the module
    docstring). Fewer than two clusters: NaN interval."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    if x.min() < 0.0 or x.max() > 1.0:
        raise ValueError("bounded_mean_interval needs values in [0, 1]")
    return rate_interval_from_sums(cluster_sums(x, clusters), confidence)


class PairedDifference(NamedTuple):
    """Mean of ``a - b`` over common deals with a t interval and two-sided p-value."""

    mean: float
    low: float
    high: float
    p_value: float
    pairs: int


def paired_difference(a: ArrayLike, b: ArrayLike, confidence: float = 0.95
                      ) -> PairedDifference:
    """Paired t comparison of two treatments measured on the same deals (NaN = missing on
    that deal; only deals with both count)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} and {y.size}")
    both = np.isfinite(x) & np.isfinite(y)
    d = x[both] - y[both]
    n = d.size
    if n < 2:
        return PairedDifference(float(d.mean()) if n else math.nan, math.nan, math.nan,
                                math.nan, n)
    mean = float(d.mean())
    error = float(d.std(ddof=1)) / math.sqrt(n)
    if error == 0.0:
        return PairedDifference(mean, mean, mean, 0.0 if mean else 1.0, n)
    quantile = student_quantile(0.5 + confidence / 2.0, n - 1)
    p_value = float(2.0 * special.stdtr(n - 1, -abs(mean) / error))  # Student's t sf
    return PairedDifference(mean, mean - quantile * error, mean + quantile * error, p_value, n)


def holm(p_values: ArrayLike, alpha: float) -> np.ndarray:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level
    ``alpha`` (NaN p-values are never rejected)."""
    p = np.asarray(p_values, dtype=np.float64)
    rejected = np.zeros(p.shape, dtype=bool)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m = len(order)
    for rank, index in enumerate(order):
        if p[index] > alpha / (m - rank):
            break
        rejected[index] = True
    return rejected
