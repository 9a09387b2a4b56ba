"""Exact expectations of ``a / (a + X)`` for a sum ``X`` of independent non-negative terms.

For ``a > 0`` and ``X >= 0``, ``1 / (a + X) = ∫₀^∞ exp(−(a + X) t) dt``, so

    E[a / (a + X)]       = a  ∫₀^∞ e^{−a t}   φ(t) dt  = E[φ(G₁ / a)],
    E[(a / (a + X))²]    = a² ∫₀^∞ t e^{−a t} φ(t) dt  = E[φ(G₂ / a)],

where ``φ(t) = E[exp(−t X)]`` is the Laplace transform of ``X`` (the product of its terms'
transforms) and ``G_k`` is a Gamma(k, 1) variable. In ``z = ln(a t)`` the weight of ``G_k`` is
the smooth density ``exp(k z − e^z) / Γ(k)``, and ``φ(e^τ)`` is a sum of terms
``exp(−e^{τ + ln v})``: the whole integrand is analytic in a strip around the real ``z`` axis,
so the trapezoid rule with a fixed step converges geometrically. With :data:`STEP` = 0.5 the
error is below 1e-7 on the shipped spaces (``tests/listener/test_laplace.py`` checks it against a
finer step and against Monte Carlo).

The nodes are one grid in ``τ = ln t`` shared by every pair, ``τ_j = LOW + j·STEP``: a pair with
its own ``a`` sees them at ``z = ln a + τ_j``, a shifted trapezoid rule, which is as accurate
as the unshifted one. So ``φ`` is evaluated once per node for all pairs, and a pair's
expectation is a weighted sum over the nodes (:class:`RatioIntegral`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LOW", "STEP", "RatioIntegral", "log_grid"]

#: trapezoid step in ln t
STEP = 0.5
#: first node: below it φ is taken as 1 and the Gamma weight there is added in closed form.
#: Since 1 − φ(t) ≤ t·E[X], that costs at most a·E[X]·t₀²/2 ≤ E[X]·e^{−20}/2 (a ≤ 1, t₀ ≤
#: e^{LOW}): below 1e-8 for sums of up to ten terms of at most 1
LOW = -10.0
#: the Gamma weights are below e^{-40} beyond z = ln(a t) = 4
HIGH_Z = 4.0
#: a pair whose ln a is below this (a card e^{-700} times less likely to be voted than the
#: clue's best card: its weight is at the edge of float64) counts as never found
LOG_FLOOR = -700.0


def log_grid(log_a_min: float) -> np.ndarray:
    """The nodes in ``ln t`` needed for every pair whose ``ln a`` is at least ``log_a_min``
    (the terms of ``X`` being at most 1)."""
    high = HIGH_Z - max(float(log_a_min), LOG_FLOOR)
    return np.arange(LOW, high + STEP, STEP)


def _lower_mass(z: np.ndarray, shape: int) -> np.ndarray:
    """P(ln G < z) for G ~ Gamma(shape, 1), shape 1 or 2."""
    g = np.exp(z)
    if shape == 1:
        return -np.expm1(-g)
    return -np.expm1(-g) - g * np.exp(-g)


class RatioIntegral:
    """Accumulates ``E[a/(a+X)]`` and ``E[(a/(a+X))²]`` for an array of pairs, one node at a
    time: call :meth:`add` with ``φ`` of each pair at every node of :func:`log_grid` (in
    order), then read :attr:`first` and :attr:`second`."""

    def __init__(self, log_a: np.ndarray, nodes: np.ndarray, moments: int = 2) -> None:
        log_a = np.asarray(log_a, dtype=np.float64)
        self.negligible = log_a < LOG_FLOOR
        self.log_a = np.maximum(log_a, LOG_FLOOR)
        self.a = np.exp(self.log_a)
        self.nodes = nodes
        self.moments = moments
        start = self.log_a + nodes[0] - STEP / 2
        # below the first node φ = 1: the Gamma mass there counts in full
        self.first = _lower_mass(start, 1)
        self.second = _lower_mass(start, 2) if moments > 1 else None
        self._next = 0

    def add(self, phi: np.ndarray, decay: np.ndarray | None = None) -> None:
        """``phi``: the transform of ``X`` at the next node, one value per pair. ``decay``,
        if the caller has it, is ``exp(-a t)`` of every pair at this node (saves an ``exp``):
        the Gamma weights of ``z = ln(a t)`` are ``(a t)^k exp(-a t) / Γ(k)``."""
        at = self.a * math.exp(self.nodes[self._next])
        self._next += 1
        if decay is None:
            decay = np.exp(-at)
        weight = STEP * at * decay
        # (broadcasting: ``phi`` may carry leading axes, e.g. one per law of X)
        self.first = self.first + weight * phi
        if self.second is not None:
            self.second = self.second + weight * at * phi

    def add_all(self, phi: np.ndarray, decay: np.ndarray) -> None:
        """Every node at once: ``phi`` and ``decay`` (as :meth:`add`) with the nodes on a last
        axis."""
        if self._next:
            raise RuntimeError("add_all after add")
        at = self.a[..., None] * np.exp(self.nodes)
        weight = STEP * at * decay
        self.first += np.einsum("...j,...j->...", weight, phi)
        if self.second is not None:
            self.second += np.einsum("...j,...j->...", weight * at, phi)
        self._next = len(self.nodes)

    def result(self) -> tuple[np.ndarray, np.ndarray | None]:
        """E[a/(a+X)] and E[(a/(a+X))²] (None with ``moments=1``), once every node is in."""
        if self._next != len(self.nodes):
            raise RuntimeError(f"{self._next} of {len(self.nodes)} nodes added")
        first = np.where(self.negligible, 0.0, self.first)
        second = None if self.second is None else np.where(self.negligible, 0.0, self.second)
        return first, second
