"""Separable compute-cost terms: the form every kernel model returns, and the `KernelModel`
protocol those models follow. Below both the kernel families' models (bindings/<family>/cost.py,
which build terms) and the targets (targets/<chip>.py, which give the models their per-chip
coefficients) and the schedule (schedule/cost.py, which evaluates them).

Compute cycles of one tile = Σ_terms coef · Π_{dim in term} f_dim(size, first, last), where `size`
is the tile's extent in that loop dimension and `first`/`last` say whether the tile is the first /
last along it (the input-channel loop uses them: bias on the first, requantization on the last).
Because each term is a product of per-dimension factors, the sum over any Cartesian set of tiles is
the product of per-dimension sums; the `model` tiler uses this for exact totals and bounds over
whole tile grids at the cost of a few outer products (schedule/cost.py, schedule/model.py).

Two units working at once (NE16 and the cluster's cores, bindings/ne16/pipeline.py): terms of an
overlap `group` are summed per `side` (0 or 1) and the group costs the larger side — a tile's
cycles = Σ ungrouped terms + Σ_groups max(Σ side 0, Σ side 1). A group is still a product form
per side, so sums over tiles of each side stay separable; Σ_tiles max ≥ max(Σ_tiles side 0,
Σ_tiles side 1) is what the bounds use (schedule/cost.py).

Factors take and return numpy arrays (they are evaluated on broadcast grids), so write them with
numpy operations only (`np.ceil`, `//`, `%`, `np.where`), never Python `if` on values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..ir.layer import LoopNest

Factor = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Term:
    """coef · Π factors; a factor maps (size, first, last) arrays of one dimension to cycles.
    `group`: an overlap group (module docstring), `side` 0 or 1 in it; "" runs in sequence."""

    coef: float
    factors: tuple[tuple[str, Factor], ...] = ()
    label: str = ""
    group: str = ""
    side: int = 0


class KernelModel(Protocol):
    """A kernel library's cost model (PULP-NN, CMSIS-NN, a SIMD DSP ...): frozen data + formulas.

    `terms(nest, cores)` returns the compute cycles of one tile as Σ coef·Π_dim f_dim(size, first,
    last) (module docstring): separable, so sums over tile grids factor per dimension, which
    makes the `model` tiler's bounds cheap and exact. Every factor must be superadditive in its
    dimension (splitting a tile never lowers the summed compute) — the tests check it. A binding
    (bindings/base.py) pairs one such model with the kernel it prices; each family's models are
    in its folder (bindings/<family>/cost.py), a target's per-chip coefficients in its file.
    """

    name: str

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]: ...


@dataclass(frozen=True)
class Scaled:
    """`model` with every term's coefficient times `factor`: a model fitted in one unit priced in
    another (targets/stm32h7.py: instruction-fitted kernels in estimated cycles)."""

    model: KernelModel
    factor: float

    @property
    def name(self) -> str:
        return self.model.name

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        return tuple(replace(t, coef=t.coef * self.factor) for t in self.model.terms(nest, cores))

    def __getattr__(self, attr: str):
        """The wrapped model's other fields (its flags, e.g. `arm`, `int_ops`)."""
        if attr == "model":
            raise AttributeError(attr)
        return getattr(self.model, attr)


def tile_cycles(terms: tuple[Term, ...], size: Mapping[str, np.ndarray],
                first: Mapping[str, np.ndarray], last: Mapping[str, np.ndarray]) -> np.ndarray:
    """Evaluate terms on broadcastable per-dimension arrays (one tile or a grid of tiles)."""

    def value(term: Term) -> np.ndarray | float:
        v: np.ndarray | float = term.coef
        for dim, f in term.factors:
            v = v * f(size[dim], first[dim], last[dim])
        return v

    return np.asarray(combine((t, value(t)) for t in terms), dtype=np.float64)


def combine(valued: Iterable[tuple[Term, np.ndarray | float]]) -> np.ndarray | float:
    """Σ of the terms' cycles, except that each overlap group counts only the larger of its two
    sides' sums (the cluster's work hidden behind an accelerator job, or the other way round)."""
    total: np.ndarray | float = 0.0
    sides: dict[tuple[str, int], np.ndarray | float] = {}
    for term, v in valued:
        if term.group:
            key = (term.group, term.side)
            sides[key] = sides.get(key, 0.0) + v
        else:
            total = total + v
    grouped: np.ndarray | float = 0.0
    for g in sorted({g for g, _ in sides}):
        grouped = grouped + np.maximum(sides.get((g, 0), 0.0), sides.get((g, 1), 0.0))
    return total + grouped


# Common factor shapes -------------------------------------------------------------------------

def ident(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    return s.astype(np.float64)


def ceil_div(n: int) -> Factor:
    """ceil(size / n): the share of the slowest of n cores."""
    def f(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        return np.ceil(s / n)
    return f


def parity_of_ceil(n: int) -> Factor:
    """ceil(size / n) mod 2 (odd row count on the slowest core)."""
    def f(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        return (np.ceil(s / n) % 2).astype(np.float64)
    return f


def parity(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    return (s % 2).astype(np.float64)


def on_last(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """1 on the last tile of the dimension (requantize once per output, after the last C tile)."""
    return np.asarray(last, dtype=np.float64) + 0.0 * s


def on_first(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """1 on the first tile of the dimension (a layer's one-off work: tables, bias)."""
    return np.asarray(first, bool).astype(np.float64) + 0.0 * s


def not_first(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """1 on every tile but the first (a partial-sum load after the first C tile)."""
    return (~np.asarray(first, bool)).astype(np.float64) + 0.0 * s


def not_last(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """1 on every tile but the last (a partial-sum store before the last C tile)."""
    return (~np.asarray(last, bool)).astype(np.float64) + 0.0 * s


def ceil4(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """⌈size / 4⌉: SIMD steps of four lanes."""
    return np.ceil(s / 4.0)


def lin(a: float, b: float) -> Factor:
    """a·size + b as a factor (b ≥ 0 keeps it superadditive)."""
    def f(s: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        return a * s + b
    return f


def per_image(terms: Iterable[Term]) -> tuple[Term, ...]:
    """The terms with an `n` factor in front: a batch tile of n images costs n kernel calls."""
    return tuple(replace(t, factors=(("n", ident), *t.factors)) for t in terms)
