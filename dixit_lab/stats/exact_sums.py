"""Sums of floats that do not depend on the order they are added in: exact, kept as integers.

Float addition is not associative: a run adds the sums of its games chunk by chunk (chunks of
a size that depends on the workers), ``dixit-lab report`` batch by batch, and the two gave
tables that differed in the last digits. Here every finite double is an integer number of
units of 2**-1074 (the smallest subnormal), so a sum of doubles is an exact Python integer,
the same whatever the grouping; it becomes a float once, at the end (:func:`to_float`,
correctly rounded). :func:`group_sums` sums a NumPy array by group without a Python object
per value: values are split into (exponent, 53-bit mantissa), mantissas summed per group and
exponent in two 26-bit halves (exact in float64 for up to 2**26 values), then shifted into
place as integers, one per group and exponent present. Integers, and multiples of
2**-24 (a quarter, a share of two) scaled to integers, whose sums stay below 2**53, are summed
by one ``bincount``: exact already.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SHIFT", "from_json", "group_counts", "group_sums", "to_float", "to_json"]

#: an exact sum is an integer number of units of 2**-SHIFT
SHIFT = 1074
_HALF = 26
_MAX_VALUES = 1 << 26  # values per call for which the halves' float sums stay exact
_EXACT = float(1 << 53)  # below it, sums of integers in float64 are exact
_DYADIC = 24  # values that are multiples of 2**-24 are summed as integers, scaled


def group_sums(groups: np.ndarray, values: np.ndarray, n_groups: int) -> list[int]:
    """The exact sum of the ``values`` of each group ``0..n_groups-1`` (``groups[i]`` is the
    group of ``values[i]``; every value finite), in units of 2**-SHIFT."""
    groups = np.asarray(groups, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    out = [0] * n_groups
    if not len(values):
        return out
    if len(values) > _MAX_VALUES:
        for start in range(0, len(values), _MAX_VALUES):
            part = group_sums(groups[start:start + _MAX_VALUES],
                              values[start:start + _MAX_VALUES], n_groups)
            out = [a + b for a, b in zip(out, part, strict=True)]
        return out
    largest = float(np.max(np.abs(values)))
    if not np.isfinite(largest):
        raise ValueError("an exact sum of values that are not all finite")
    for scale in (0, _DYADIC):
        # integers (or, scaled by 2**_DYADIC, multiples of 2**-_DYADIC: quarters, halves)
        # whose every partial sum is below 2**53: float sums are exact already
        scaled = values * float(1 << scale) if scale else values
        if largest * len(values) * float(1 << scale) < _EXACT and \
                np.array_equal(scaled, np.rint(scaled)):
            totals = np.bincount(groups, weights=scaled, minlength=n_groups)
            return [int(total) << (SHIFT - scale) for total in totals.tolist()]
    fraction, exponent = np.frexp(values)  # values = fraction * 2**exponent, |fraction| < 1
    high = np.floor(fraction * 2.0 ** (53 - _HALF))  # the mantissa fraction * 2**53 in two
    low = fraction * 2.0 ** 53 - high * 2.0 ** _HALF  # integer halves, each exact in float64
    smallest = int(exponent.min())
    span = int(exponent.max()) - smallest + 1
    keys = groups * span + (exponent - smallest)
    found: np.ndarray | None = None
    width = n_groups * span
    if width > 8 * len(keys) + 4096:  # many groups or exponents: number the pairs present
        found, keys = np.unique(keys, return_inverse=True)
        width = len(found)
    high_sums = np.bincount(keys, weights=high, minlength=width)
    low_sums = np.bincount(keys, weights=low, minlength=width)
    for key in np.flatnonzero((high_sums != 0) | (low_sums != 0)).tolist():
        pair = key if found is None else int(found[key])
        group, power = divmod(pair, span)
        total = (int(high_sums[key]) << _HALF) + int(low_sums[key])  # sum of mantissas
        shift = power + smallest - 53 + SHIFT
        out[group] += total << shift if shift >= 0 else total >> -shift
    return out


def group_counts(groups: np.ndarray, n_groups: int, weights: np.ndarray | None = None
                 ) -> list[int]:
    """:func:`group_sums` of integers: the number of entries of each group, or the sum of
    their integer ``weights`` (an int array), in units of 2**-SHIFT; without the checks
    and splits of floats (a chunk's counts are a fifth of its summing time)."""
    groups = np.asarray(groups, dtype=np.int64)
    if weights is None:
        totals = np.bincount(groups, minlength=n_groups).tolist()
    else:
        weights = np.asarray(weights)
        if weights.dtype.kind not in "iub":
            raise TypeError(f"group_counts of {weights.dtype} weights: use group_sums")
        largest = int(np.abs(weights).max(initial=0))
        if largest * len(weights) >= _EXACT:  # a float sum could round: add integers
            return _integer_sums(groups, weights, n_groups)
        totals = np.bincount(groups, weights=weights, minlength=n_groups).tolist()
    return [int(total) << SHIFT for total in totals]


def _integer_sums(groups: np.ndarray, weights: np.ndarray, n_groups: int) -> list[int]:
    out = [0] * n_groups
    for group, weight in zip(groups.tolist(), weights.tolist(), strict=True):
        out[group] += int(weight)
    return [total << SHIFT for total in out]


def to_float(units: int) -> float:
    """An exact sum as the float nearest to it."""
    return units / (1 << SHIFT)


def to_json(units: int) -> list[int]:
    """An exact sum for JSON: ``[odd, power]`` with ``units == odd * 2**power`` (short where
    ``units`` itself would be a number of some 330 digits)."""
    if not units:
        return [0, 0]
    power = (units & -units).bit_length() - 1
    return [units >> power, power]


def from_json(data: Any) -> int:
    """An exact sum written by :func:`to_json` (or a plain number, read exactly)."""
    if isinstance(data, list):
        odd, power = data
        return int(odd) << int(power)
    return group_sums(np.zeros(1, np.int64), np.array([float(data)]), 1)[0]
