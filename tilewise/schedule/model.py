"""The `model` tiler: minimum predicted cycles over tile sizes × loop orders × buffering, exactly.

Space (space.py): every tile size 1..D of every tile loop that the binding's tile rules allow
(input channels included: with C tiled, 32-bit partial sums stay in L1, so layers whose full-C
tiles never fit still deploy), every loop order up to equivalence, single or double buffering
(double only with asynchronous DMA), subject to the L1 budget of the module's memory level.
Objective: `Evaluator.exact` cycles (cost.py).

Search: branch and bound, exact within the space. For each buffering the tile sizes are fixed one
dimension at a time; a family of candidates that agree on the fixed dimensions is pruned when its
L1 lower bound exceeds the budget (the L1 bytes do not depend on the loop order) or, for every
loop order, its cycle lower bound (`Evaluator.bound`: free dimensions at full extent for compute
and traffic — the kernel terms are superadditive, finer tiling never moves fewer bytes or chunks —
and at their smallest for the exposed first load / last store) is not below the best schedule
found so far. The order-independent parts of the bound are shared by all orders. Surviving
complete candidates are evaluated exactly in increasing order of their bound until the bound
reaches the incumbent. An incumbent comes first from a coarse probe (powers of two and halves).
No heuristic cuts the space: tests/test_model_tiler.py checks the result against brute force.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..targets.base import Target
from .cost import Evaluator, untiled_schedule
from .placement import Placement
from .space import REDUCING, LayerSchedule, inner_loops, loop_dims, operands

#: dimensions fixed first to last in the branch and bound
EXPANSION = ("k", "oy", "c", "ox", "n")
_TOL = 1e-9
_BATCH = 512
#: the most candidates one expansion step holds at once (see `_expand`)
_CAP = 1 << 20


def candidate_orders(nest: LoopNest, placement: Placement) -> list[tuple[str, ...]]:
    """Loop orders (outer→inner) that differ in which operand stays resident.

    Dimensions of extent 1 go outermost. Without partial-sum spilling, the input-channel loop is
    innermost (partial sums stay in L1 across it). Orders equivalent for every operand under every
    choice of which loops have a single trip are merged (they load and store identically).
    """
    dims = loop_dims(nest.kind)
    size = {"n": nest.N, "k": nest.K, "c": nest.C, "oy": nest.OY, "ox": nest.OX}
    trivial = [d for d in dims if size[d] == 1]
    active = [d for d in dims if size[d] > 1]
    tail: list[str] = []
    if nest.kind in REDUCING and not placement.binding.psum_spill and "c" in active:
        active.remove("c")
        tail = ["c"]
    ops = operands(nest, placement.binding.const_bytes)
    loops = active + tail
    seen: dict[tuple, tuple[str, ...]] = {}
    for perm in itertools.permutations(active):
        order = tuple(trivial) + perm + tuple(tail)
        sig = []
        for r in range(len(loops) + 1):
            for ones in itertools.combinations(loops, r):
                counts = {d: (1 if d in ones or d in trivial else 2) for d in dims}
                sig.append(tuple(frozenset(inner_loops(order, op.dims, counts)) for op in ops))
        seen.setdefault(tuple(sig), order)
    return list(seen.values())


@dataclass
class _Best:
    cycles: float = math.inf
    l1: int = 0
    tile: dict | None = None
    order: tuple[str, ...] = ()
    buffering: int = 1

    def offer(self, cycles: np.ndarray, l1: np.ndarray, sel: dict, order: tuple, buf: int):
        i = int(np.lexsort((l1, cycles))[0])
        c = float(cycles[i])
        if c < self.cycles * (1 - _TOL) or (c <= self.cycles * (1 + _TOL) and int(l1[i]) < self.l1):
            self.cycles, self.l1 = c, int(l1[i])
            self.tile = {d: int(v[i]) for d, v in sel.items()}
            self.order, self.buffering = order, buf


def _bufferings(ev: Evaluator) -> tuple[int, ...]:
    return (2, 1) if ev.overlap else (1,)


def _probe(ev: Evaluator, orders: list, best: _Best) -> None:
    """A coarse grid (powers of two, halves, full; the nearest allowed sizes) to find a good
    incumbent fast."""
    vals = {}
    for d in ev.dims:
        D, allowed = ev.D[d], ev.values[d]
        v = {D, -(-D // 2), -(-D // 4)} | {1 << i for i in range(D.bit_length()) if 1 << i < D}
        near = allowed[np.minimum(np.searchsorted(allowed, sorted(v)), len(allowed) - 1)]
        vals[d] = np.unique(near)
    grid = np.meshgrid(*[vals[d] for d in ev.dims], indexing="ij")
    sel = {d: g.ravel() for d, g in zip(ev.dims, grid)}
    for buf in _bufferings(ev):
        ok = ev.fits(sel, None, buf)
        if not ok.any():
            continue
        cand = {d: v[ok] for d, v in sel.items()}
        parts = ev.parts(cand)
        for order in orders:
            lb = ev.combine(parts, order, buf)
            pick = np.argsort(lb, kind="stable")[:8]
            sub = {d: v[pick] for d, v in cand.items()}
            r = ev.exact(sub, order, buf)
            best.offer(r["cycles"], ev.l1_bytes(sub, order, buf), sub, order, buf)


def _branch_and_bound(ev: Evaluator, orders: list, buf: int, best: _Best) -> None:
    """Fix tile sizes dimension by dimension for all loop orders at once (they share every
    order-independent part of the bound); a family survives while some order can still fit and
    beat the incumbent."""
    dims = tuple(d for d in EXPANSION if d in ev.dims)
    _expand(ev, orders, buf, best, {}, 1, dims, frozenset(ev.dims))


def _expand(ev: Evaluator, orders: list, buf: int, best: _Best, cur: dict[str, np.ndarray],
            size: int, dims: tuple[str, ...], free: frozenset[str]) -> None:
    """Fix `dims[0]` for the `size` surviving families `cur`, prune, go on with the rest; the
    leaves are evaluated exactly. When the next expansion would hold more than `_CAP` candidates
    (very large loop extents: a 65,536-row GEMM), the families and the values of the dimension
    are taken in slices, depth first: the same candidates are bounded and evaluated, in memory
    bounded by `_CAP` instead of the product of the extents."""
    d, values = dims[0], ev.values[dims[0]]
    if size * len(values) > _CAP:
        if size > 1:
            step = max(1, _CAP // len(values))
            for s in range(0, size, step):
                _expand(ev, orders, buf, best, {k: v[s:s + step] for k, v in cur.items()},
                        min(step, size - s), dims, free)
            return
        for s in range(0, len(values), _CAP):
            _expand_with(ev, orders, buf, best, cur, 1, d, values[s:s + _CAP], dims, free)
        return
    _expand_with(ev, orders, buf, best, cur, size, d, values, dims, free)


def _expand_with(ev: Evaluator, orders: list, buf: int, best: _Best, cur: dict[str, np.ndarray],
                 size: int, d: str, values: np.ndarray, dims: tuple[str, ...],
                 free: frozenset[str]) -> None:
    """One step of `_expand`: the families × `values` of `d`, pruned."""
    cur = {k: np.repeat(v, len(values)) for k, v in cur.items()}
    cur[d] = np.tile(values, size)
    fr = free - {d}
    fits = ev.fits(cur, None, buf, fr)      # the same for every order
    idx = np.flatnonzero(fits)
    cur = {k: v[idx] for k, v in cur.items()}
    fits = fits[idx]
    parts = ev.parts(cur, fr)
    alive = np.zeros((len(orders), len(idx)), bool)
    lbs = np.full(alive.shape, np.inf)
    for i, order in enumerate(orders):
        lbs[i] = np.broadcast_to(ev.combine(parts, order, buf), fits.shape)
        alive[i] = fits & (lbs[i] < best.cycles * (1 + _TOL))
    if len(dims) > 1:
        idx = np.flatnonzero(alive.any(0))
        if len(idx):
            _expand(ev, orders, buf, best, {k: v[idx] for k, v in cur.items()}, len(idx),
                    dims[1:], fr)
        return
    # leaves: exact, in increasing order of their bound, per loop order
    for i, order in enumerate(orders):
        cand = np.flatnonzero(alive[i])
        cand = cand[np.argsort(lbs[i, cand], kind="stable")]
        for s in range(0, len(cand), _BATCH):
            chunk = cand[s:s + _BATCH]
            chunk = chunk[lbs[i, chunk] < best.cycles * (1 + _TOL)]
            if len(chunk) == 0:
                break
            sub = {k: v[chunk] for k, v in cur.items()}
            r = ev.exact(sub, order, buf)
            best.offer(r["cycles"], ev.l1_bytes(sub, order, buf), sub, order, buf)


def min_l1_bytes(ev: Evaluator, orders: list) -> int:
    """The least L1 any schedule of the space needs (the smallest allowed tiles, single
    buffering)."""
    one = {d: ev.values[d][:1] for d in ev.dims}
    return int(min(ev.l1_bytes(one, o, 1)[0] for o in orders))


def tile(nest: LoopNest, target: Target, placement: Placement) -> LayerSchedule:
    """The fastest schedule of `nest` placed by `placement` (exact within the space, see module
    doc)."""
    if placement.untiled:
        return untiled_schedule(nest, target, placement)
    module = placement.module
    ev = Evaluator(nest, target, placement)
    orders = candidate_orders(nest, placement)
    best = _Best()
    _probe(ev, orders, best)
    for buf in _bufferings(ev):
        _branch_and_bound(ev, orders, buf, best)
    if best.tile is None:
        rules = placement.rules.describe()
        one = {d: ev.values[d][:1] for d in ev.dims}
        need = {m: int(v[0]) for m, v in ev.memory_bytes(one, 1).items()}
        need[module.memory] = min_l1_bytes(ev, orders) - sum(
            v for m, v in need.items() if m != module.memory)
        free = {module.memory: ev.free, **ev.side_free}
        short = [m for m in need if need[m] > free[m]] or [module.memory]
        raise TilewiseError(
            "cannot fit: needs at least " + " and ".join(
                f"{need[m]} bytes of {m}" for m in short)
            + f" on module {module.name} of {target.name} ("
            + ", ".join(f"{free[m]} bytes free in {m}" for m in short) + ")"
            + (f"; its kernel {rules}" if rules else ""))
    return ev.build(best.tile, best.order, best.buffering, tiler="model")


def brute_force(nest: LoopNest, target: Target, placement: Placement
                ) -> tuple[float, dict, tuple, int]:
    """Exhaustive reference for tests: exact cycles of every allowed tile size × every permutation
    of the tile loops with more than one trip (no equivalence merging) × buffering, that fits and
    keeps partial sums legal."""
    ev = Evaluator(nest, target, placement)
    grid = np.meshgrid(*[ev.values[d] for d in ev.dims], indexing="ij")
    sel = {d: g.ravel() for d, g in zip(ev.dims, grid)}
    count = {d: -(-ev.D[d] // sel[d]) for d in ev.dims}
    best = _Best()
    trivial = tuple(d for d in ev.dims if ev.D[d] == 1)   # one trip: never affects reuse
    active = [d for d in ev.dims if ev.D[d] > 1]
    for buf in _bufferings(ev):
        for perm in itertools.permutations(active):
            order = trivial + perm
            ok = ev.fits(sel, order, buf)
            if "c" in order and not ev.spill:
                after = order[order.index("c") + 1:]
                legal = np.ones_like(ok)
                for d in after:
                    legal &= count[d] == 1
                ok &= (count["c"] == 1) | legal
            idx = np.flatnonzero(ok)
            for s in range(0, len(idx), _BATCH):
                sub = {d: v[idx[s:s + _BATCH]] for d, v in sel.items()}
                r = ev.exact(sub, order, buf)
                best.offer(r["cycles"], ev.l1_bytes(sub, order, buf), sub, order, buf)
    return best.cycles, best.tile or {}, best.order, best.buffering
