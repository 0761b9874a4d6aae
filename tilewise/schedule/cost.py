"""The generic cost model of a schedule: cycles, DMA traffic and L1 bytes, exact and vectorized.

Per tile i (DESIGN.md "Scheduling"; seed 003 §V; seed 002 eq. 5.7–5.9):
- C_i = kernel cycles (the binding's separable cost terms, bindings/portable/cost.py; terms of an overlap
  group cost the larger of their two sides, bindings/cost_terms.py) + dma_issue_cycles ×
  the tile's transfers (core time to program the DMA);
- D_i = Σ over the tile's transfers of dma_setup + chunks·dma_chunk + bytes / bandwidth, where the
  tile's transfers are the loads of the operands that change at tile i and the store of its
  output if it completes one (space.py's reuse rule);
- asynchronous DMA, double buffering: the first tile's loads (prologue) and the last tile's store
  (epilogue) are exposed, everything else overlaps tile by tile:
      cycles = L_1 + S_T + Σ_i max(C_i, D_i − [i=1]·L_1 − [i=T]·S_T)
  (one tile: L + C + S);
- single buffering or blocking DMA: cycles = Σ_i (C_i + D_i);
- plus the module's fixed `layer_overhead_cycles` once per layer (counted as compute), outside
  the tile sum: every candidate of a layer pays it alike, bounds included; a layer run whole
  whose binding's function is called directly, with no fork (Binding.direct_call), pays the
  module's `call_overhead_cycles` instead (Module.fixed_cycles).

Tiles are grouped into classes: along each dimension, positions with the same (size, loaded input
extent, first, last) behave identically, and a tile's behaviour is fixed by its per-dimension
classes. `Evaluator.exact` sums class combinations × multiplicities — the same number as walking
every tile (`space.iter_tiles`, tests hold them equal) at a fraction of the cost, vectorized over a
batch of candidate schedules. `Evaluator.bound` gives a lower bound of the cycles (and of the L1
bytes) for a whole family of candidates with some dimensions left free, from per-dimension sums:
the `model` tiler's branch and bound (model.py) rests on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bindings.cost_terms import combine, tile_cycles
from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..ir.operands import operand_bytes
from ..targets.base import Target
from .placement import Placement
from .space import (
    REDUCING,
    Buffer,
    DimTiling,
    LayerSchedule,
    Traffic,
    dim_size,
    loop_dims,
    operands,
    plan_buffers,
    positions,
)


@dataclass(frozen=True)
class DimTable:
    """Per tile size t = 1..D of one dimension: position classes (padded to M) and sums."""

    dim: str
    D: int
    n: np.ndarray          # (D,) tile count
    size: np.ndarray       # (D, M) class output extent
    insz: np.ndarray       # (D, M) class loaded input extent (= size without halo)
    first: np.ndarray      # (D, M) bool
    last: np.ndarray       # (D, M) bool
    cnt: np.ndarray        # (D, M) multiplicity (0 = padding)
    maxin: np.ndarray      # (D,) largest loaded input extent
    sum_in: np.ndarray     # (D,) Σ loaded input extents over positions
    nonempty: np.ndarray   # (D,) positions whose loaded input is non-empty
    partial: np.ndarray    # (D,) every position's input is a strict part of the tensor extent
    first_in: np.ndarray   # (D,) loaded extent of the first tile
    full_extent: int       # input extent of the tensor along this dim


def dim_table(nest: LoopNest, dim: str) -> DimTable:
    D = dim_size(nest, dim)
    full = {"oy": nest.IY, "ox": nest.IX}.get(dim, D)
    rows = []
    for t in range(1, D + 1):
        pos = positions(nest, dim, t)
        classes: dict[tuple, int] = {}
        for p in pos:
            key = (p.size, p.in_size, p.index == 0, p.index == len(pos) - 1)
            classes[key] = classes.get(key, 0) + 1
        rows.append((len(pos), classes, pos))
    M = max(len(c) for _, c, _ in rows)
    size = np.ones((D, M), np.int64)
    insz = np.ones((D, M), np.int64)
    first = np.zeros((D, M), bool)
    last = np.zeros((D, M), bool)
    cnt = np.zeros((D, M), np.int64)
    for i, (_, classes, _) in enumerate(rows):
        for j, ((s, ins, f, l), c) in enumerate(classes.items()):
            size[i, j], insz[i, j], first[i, j], last[i, j], cnt[i, j] = s, ins, f, l, c
    return DimTable(
        dim, D, np.array([r[0] for r in rows], np.int64), size, insz, first, last, cnt,
        np.array([max(p.in_size for p in r[2]) for r in rows], np.int64),
        np.array([sum(p.in_size for p in r[2]) for r in rows], np.int64),
        np.array([sum(p.in_size > 0 for p in r[2]) for r in rows], np.int64),
        np.array([all(p.in_size < full for p in r[2]) for r in rows], bool),
        np.array([r[2][0].in_size for r in rows], np.int64), full)


def _hwc_chunks(ext: tuple, full: tuple) -> np.ndarray:
    """Vectorized space.hwc_chunks for 4-D (n, rows, cols, ch) boxes."""
    n, r, c, ch = ext
    N, R, C, CH = full
    return np.where(ch < CH, n * r * c, np.where(c < C, n * r, np.where(r < R, n, 1)))


class Evaluator:
    """Cost model of one layer placed on a module with a binding, for any candidate schedule."""

    def __init__(self, nest: LoopNest, target: Target, placement: Placement):
        module, binding = placement.module, placement.binding
        self.nest, self.target, self.module = nest, target, module
        self.placement, self.binding, self.rules = placement, binding, placement.rules
        self.level = target.memory(module.memory)
        self.dims = loop_dims(nest.kind)
        self.D = {d: dim_size(nest, d) for d in self.dims}
        #: the tile sizes the binding's rules allow per dimension (ascending)
        self.values = {d: self.rules.allowed(d, self.D[d]) for d in self.dims}
        self.tables = {d: dim_table(nest, d) for d in self.dims}
        #: constants read where they are stored (the module's weights_from memory is in_place)
        self.in_place = bool(module.weights_from
                             and target.memory(module.weights_from).in_place)
        self.ops = operands(nest, binding.const_bytes, self.in_place)
        self.terms = binding.cost.terms(nest, module.cores)
        self.bw = self.level.bytes_per_cycle(target.clock_mhz)
        #: inputs the binding's layout makes the DMA reorder on the way in move at their own rate
        x_bw = binding.x_dma_bytes_per_cycle
        self.bw_x = min(self.bw, x_bw) if x_bw > 0 else self.bw
        self.setup = float(self.level.dma_setup_cycles)
        self.cc = float(self.level.dma_chunk_cycles)
        self.issue = float(self.level.dma_issue_cycles)
        self.overlap = self.level.dma_async
        self.free = self.level.free
        #: operands whose tiles live in a memory of their own (Module.operand_memory) and the
        #: free bytes of each such memory: a schedule fits when every memory's buffers fit it
        self.side = dict(module.operand_memory)
        self.side_free = {m: target.memory(m).free for m in self.side.values()}
        self.cb = binding.const_bytes
        self.psum_bits = binding.psum_bits
        self.spill = binding.psum_spill and nest.kind in REDUCING
        #: once per layer, outside the tile sum (targets.base.Module.layer_overhead_cycles)
        self.layer_oh = float(module.layer_overhead_cycles)
        # Σ over the positions of each tile size of every term factor: (D,) per (term, dim)
        self.fsum: list[dict[str, np.ndarray]] = []
        for term in self.terms:
            sums = {}
            for d, f in term.factors:
                tb = self.tables[d]
                sums[d] = (f(tb.size, tb.first, tb.last) * tb.cnt).sum(1)
            self.fsum.append(sums)

    # -- operand geometry --------------------------------------------------------------------
    def _ch(self, v: dict) -> np.ndarray:
        return v["c"] if self.nest.kind in REDUCING else v["k"]

    def _op_bytes(self, name: str, S: dict, I: dict) -> np.ndarray:
        """Bytes of operand tiles of sizes S (input extents I) — operands.py's formula."""
        return operand_bytes(self.nest, name, const_bytes=self.cb, psum_bits=self.psum_bits,
                             n=S["n"], k=S["k"], c=S["c"] if "c" in S else S["k"], oy=S["oy"],
                             ox=S["ox"], rows=I["oy"], cols=I["ox"])

    def _op_chunks(self, name: str, S: dict, I: dict) -> np.ndarray:
        nest = self.nest
        if name in ("x", "x2") and not (name == "x2" and nest.residual):
            ch_full = nest.C if nest.kind in REDUCING else nest.K
            return _hwc_chunks((S["n"], I["oy"], I["ox"], self._ch(S)),
                               (nest.N, nest.IY, nest.IX, ch_full))
        if name == "y" or name == "x2":     # y, or a residual's skip tile (its box)
            return _hwc_chunks((S["n"], S["oy"], S["ox"], S["k"]),
                               (nest.N, nest.OY, nest.OX, nest.K))
        return np.ones_like(S["k"])

    def _dma(self, nbytes: np.ndarray, chunks: np.ndarray, bw: float | None = None) -> np.ndarray:
        bw = self.bw if bw is None else bw
        return np.where(nbytes > 0, self.setup + chunks * self.cc + nbytes / bw, 0.0)

    def _inner_masks(self, order: tuple[str, ...], n: dict, dims: frozenset[str]) -> list:
        """Per loop position j: (B,) bool, loop j is inner to the operand's innermost relevant
        loop with more than one trip (the operand stays resident across it)."""
        masks = [None] * len(order)
        acc = np.ones_like(next(iter(n.values())), dtype=bool)
        for j in range(len(order) - 1, -1, -1):
            d = order[j]
            if d in dims:
                acc = acc & (n[d] == 1)
            masks[j] = acc.copy()
        return masks

    # -- exact evaluation ----------------------------------------------------------------------
    def exact(self, sel: dict[str, np.ndarray], order: tuple[str, ...], buffering: int) -> dict:
        """Exact cycles & traffic for B candidates (sel: dim -> (B,) tile sizes)."""
        dims = self.dims
        B = len(np.atleast_1d(sel[dims[0]]))
        nd = len(dims)
        S, I, F, L, N = {}, {}, {}, {}, {}
        n = {}
        for j, d in enumerate(dims):
            tb = self.tables[d]
            idx = np.atleast_1d(np.asarray(sel[d], np.int64)) - 1
            shape = (B,) + (1,) * j + (tb.cnt.shape[1],) + (1,) * (nd - j - 1)
            S[d] = tb.size[idx].reshape(shape)
            I[d] = tb.insz[idx].reshape(shape)
            F[d] = tb.first[idx].reshape(shape)
            L[d] = tb.last[idx].reshape(shape)
            N[d] = tb.cnt[idx].reshape(shape)
            n[d] = tb.n[idx]
        bshape = (B,) + (1,) * nd
        cnt = np.ones(bshape, np.int64)
        for d in dims:
            cnt = cnt * N[d]
        comp = tile_cycles(self.terms, S, F, L)
        loads = np.zeros(1)
        stores = np.zeros(1)
        ntr = np.zeros(1)
        out: dict = {}
        for op in self.ops:
            masks = self._inner_masks(order, n, op.dims)
            nb = self._op_bytes(op.name, S, I)
            ch = self._op_chunks(op.name, S, I)
            fetch = np.ones(1, bool)
            flush = np.ones(1, bool)
            for j, d in enumerate(order):
                m = masks[j].reshape(bshape)
                fetch = fetch & (~m | F[d])
                flush = flush & (~m | L[d])
            if op.output:
                first_c = F["c"] if "c" in F else True
                last_c = L["c"] if "c" in L else True
                pbytes = self._op_bytes("psum", S, I)
                t_final = self._dma(nb, ch)
                t_part = self._dma(pbytes, ch)
                st = flush & last_c
                st_p = flush & ~np.asarray(last_c, bool)
                ld_p = fetch & ~np.asarray(first_c, bool)
                stores = stores + np.where(st, t_final, 0.0) + np.where(st_p, t_part, 0.0)
                loads = loads + np.where(ld_p, t_part, 0.0)
                k_tr = ((st & (nb > 0)).astype(np.int64) + (st_p & (pbytes > 0)).astype(np.int64)
                        + (ld_p & (pbytes > 0)).astype(np.int64))
                ntr = ntr + k_tr
                byt = np.where(st, nb, 0) + np.where(st_p, pbytes, 0) + np.where(ld_p, pbytes, 0)
                chk = (np.where(st, ch, 0) + np.where(st_p, ch, 0) + np.where(ld_p, ch, 0)) * (nb > 0)
            else:
                t = self._dma(nb, ch, self.bw_x if op.name == "x" else self.bw)
                loads = loads + np.where(fetch, t, 0.0)
                k_tr = fetch & (nb > 0)
                ntr = ntr + k_tr
                byt = np.where(fetch, nb, 0)
                chk = np.where(k_tr, ch, 0)
            out[op.name] = ((cnt * k_tr).reshape(B, -1).sum(1), (cnt * chk).reshape(B, -1).sum(1),
                            (cnt * byt).reshape(B, -1).sum(1))
        comp = comp + self.issue * ntr
        dma = loads + stores
        comp, dma, loads, stores = np.broadcast_arrays(comp, dma, loads, stores)
        cntb = np.broadcast_to(cnt, comp.shape)
        flat = lambda a: a.reshape(B, -1)  # noqa: E731
        T = flat(cntb).sum(1)
        tot_c = flat(cntb * comp).sum(1)
        tot_d = flat(cntb * dma).sum(1)
        if self.overlap and buffering == 2:
            is_first = np.ones(bshape, bool)
            is_last = np.ones(bshape, bool)
            for d in dims:
                is_first = is_first & F[d] & (N[d] > 0)
                is_last = is_last & L[d] & (N[d] > 0)
            is_first = np.broadcast_to(is_first, comp.shape)
            is_last = np.broadcast_to(is_last, comp.shape)
            pick = lambda a, m: flat(np.where(m, a, 0.0)).sum(1)  # noqa: E731
            C1, D1, L1 = pick(comp, is_first), pick(dma, is_first), pick(loads, is_first)
            CT, DT, ST = pick(comp, is_last), pick(dma, is_last), pick(stores, is_last)
            body = flat(cntb * np.maximum(comp, dma)).sum(1)
            multi = (L1 + ST + body - np.maximum(C1, D1) + np.maximum(C1, D1 - L1)
                     - np.maximum(CT, DT) + np.maximum(CT, DT - ST))
            cycles = np.where(T == 1, tot_c + tot_d, multi)
        else:
            cycles = tot_c + tot_d
        cycles = cycles + self.layer_oh
        tot_c = tot_c + self.layer_oh
        return {"cycles": cycles, "compute": tot_c, "dma": tot_d, "tiles": T, "ops": out,
                "n": n}

    # -- L1 bytes ------------------------------------------------------------------------------
    def l1_bytes(self, sel: dict[str, np.ndarray], order: tuple[str, ...] | None, buffering: int,
                 free: frozenset[str] = frozenset()) -> np.ndarray:
        """L1 bytes of candidates — every memory's buffers, as the host's arena holds them; dims
        in `free` count at tile size 1 with one trip (a lower bound over every completion of the
        family). Independent of the loop order: an operand is moved more than once (two copies
        when double buffering) iff one of its own loops is tiled."""
        parts = self.memory_bytes(sel, buffering, free)
        return sum(parts.values())

    def fits(self, sel: dict[str, np.ndarray], order: tuple[str, ...] | None, buffering: int,
             free: frozenset[str] = frozenset()) -> np.ndarray:
        """Candidates whose buffers fit: the level's in its free bytes and each operand memory's
        in its own (`l1_bytes(...) <= free` for a module without operand memories)."""
        parts = self.memory_bytes(sel, buffering, free)
        ok = parts.pop(self.module.memory) <= self.free
        for mem, b in parts.items():
            ok = ok & (b <= self.side_free[mem])
        return ok

    def memory_bytes(self, sel: dict[str, np.ndarray], buffering: int,
                     free: frozenset[str] = frozenset()) -> dict[str, np.ndarray]:
        """Bytes of candidates' buffers per memory: the module's level (operand tiles, partial
        sums, scratch) and each operand memory (`l1_bytes`)."""
        nest = self.nest
        S, I, n = {}, {}, {}
        for d in self.dims:
            tb = self.tables[d]
            if d in free:
                S[d] = np.ones(1, np.int64)
                I[d] = np.full(1, tb.maxin[0])
                n[d] = np.ones(1, np.int64)
            else:
                t = np.asarray(sel[d], np.int64)
                S[d], I[d], n[d] = t, tb.maxin[t - 1], tb.n[t - 1]
        total = 0
        side: dict[str, np.ndarray] = {}
        al = lambda v: -(-v // 4) * 4  # noqa: E731
        spilled = np.zeros(1, bool)
        if self.spill and "c" not in free:
            spilled = n["c"] > 1
        for op in self.ops:
            size = self._op_bytes(op.name, S, I)
            if op.output:
                size = np.where(spilled, np.maximum(size, self._op_bytes("psum", S, I)), size)
            tiled = np.zeros(1, bool)
            for d in op.dims:
                tiled = tiled | (n[d] > 1)
            copies = np.where((buffering == 2) & tiled, 2, 1)
            if op.name in self.side:
                mem = self.side[op.name]
                side[mem] = side.get(mem, 0) + al(size) * copies
                continue
            total = total + al(size) * copies
        if nest.kind in REDUCING and not self.spill and "c" not in free:
            ps = self._op_bytes("psum", S, I)
            total = total + np.where(n["c"] > 1, al(ps), 0)
        c = S["c"] if "c" in S else S["k"]
        scr = self.binding.scratch(nest, self.module.cores, S["k"], c, S["oy"], S["ox"])
        total = total + al(np.asarray(scr, np.int64))
        shape = np.broadcast(*[np.asarray(v) for v in S.values()]).shape
        return {self.module.memory: np.broadcast_to(total, shape),
                **{m: np.broadcast_to(v, shape) for m, v in side.items()}}

    # -- family lower bound --------------------------------------------------------------------
    def bound(self, sel: dict[str, np.ndarray], order: tuple[str, ...], buffering: int,
              free: frozenset[str] = frozenset()) -> np.ndarray:
        """Lower bound of `exact(...)['cycles']` over every candidate agreeing with `sel` on the
        fixed dims (dims in `free` may take any tile size). Exact for single buffering when no
        dim is free, every input tile is either full or partial along each dim and the binding has
        no overlap group over several tiles (a group's sides are bounded by their sums)."""
        return self.combine(self.parts(sel, free), order, buffering)

    def parts(self, sel: dict[str, np.ndarray], free: frozenset[str] = frozenset()) -> dict:
        """The loop-order-independent pieces of `bound`: summed compute, each operand's traffic
        over one pass of its own tile grid, the first tile's loads and the last tile's store."""
        nest = self.nest
        # per-dim views: counts n, Σ sizes, Σ loaded input extents, non-empty positions, partial
        n, ssum, isum, ne, part, first_s, first_i, last_s = {}, {}, {}, {}, {}, {}, {}, {}
        for d in self.dims:
            tb = self.tables[d]
            if d in free:
                idx = np.full(1, tb.D - 1)           # full extent: the least traffic & compute
                n[d] = np.ones(1, np.int64)
                first_s[d] = np.ones(1, np.int64)    # smallest first / last tile
                first_i[d] = np.full(1, tb.first_in[0])
                last_s[d] = np.ones(1, np.int64)
            else:
                idx = np.asarray(sel[d], np.int64) - 1
                n[d] = tb.n[idx]
                first_s[d] = tb.size[idx, 0]
                first_i[d] = tb.first_in[idx]
                last_s[d] = self.D[d] - (tb.n[idx] - 1) * (idx + 1)
            ssum[d] = np.full(1, self.D[d]) if d in free else np.full_like(idx, self.D[d])
            isum[d] = tb.sum_in[idx]
            ne[d] = tb.nonempty[idx]
            part[d] = tb.partial[idx]
        # compute: Σ_terms coef · Π_d Σ_positions f_d  (absent dims contribute their tile count);
        # an overlap group its larger side's sum, a lower bound of Σ_tiles max (compute.py)
        def value(term, sums):
            v = term.coef
            for d in self.dims:
                if d in sums:
                    a = sums[d]
                    v = v * (a[-1] if d in free else a[np.asarray(sel[d], np.int64) - 1])
                else:
                    v = v * n[d]
            return v

        comp = combine((term, value(term, sums)) for term, sums in zip(self.terms, self.fsum))
        # traffic of one pass over each operand's grid
        ops = {}
        L1 = 0.0
        ST = 0.0
        ch_d = "c" if nest.kind in REDUCING else "k"
        exact_first = not free
        for op in self.ops:
            grid = np.ones(1, np.int64)
            for d in op.dims:
                grid = grid * n[d]
            if op.name == "x2" and nest.residual:   # the skip tensor: loads of y's tiles
                nbytes = self._op_bytes("x2", ssum, isum)
                nonempty = grid
                chunks = self._y_chunk_sum(n, ssum)
                fb = self._op_bytes("x2", first_s, first_i)
                fch = _hwc_chunks((first_s["n"], first_s["oy"], first_s["ox"], first_s["k"]),
                                  (nest.N, nest.OY, nest.OX, nest.K)) if exact_first else 1
                L1 = L1 + self._dma(fb, fch)
            elif op.name in ("x", "x2"):
                nbytes = self._op_bytes(op.name, ssum, isum)
                nonempty = n["n"] * ne["oy"] * ne["ox"] * n[ch_d]
                chunks = np.where(part[ch_d], ssum["n"] * isum["oy"] * isum["ox"] * n[ch_d],
                                  np.where(part["ox"], ssum["n"] * isum["oy"] * n["ox"] * n[ch_d],
                                           np.where(part["oy"], ssum["n"] * n["oy"] * n["ox"]
                                                    * n[ch_d], grid)))
                fb = self._op_bytes(op.name, first_s, first_i)
                if exact_first:
                    fch = _hwc_chunks((first_s["n"], first_i["oy"], first_i["ox"],
                                       first_s[ch_d]),
                                      (nest.N, nest.IY, nest.IX, nest.C if ch_d == "c" else nest.K))
                else:
                    fch = 1
                L1 = L1 + self._dma(fb, fch, self.bw_x if op.name == "x" else self.bw)
            elif op.name == "w":
                nbytes = self._op_bytes("w", ssum, isum)
                nonempty, chunks = grid, grid
                fb = self._op_bytes("w", first_s, first_i)
                L1 = L1 + self._dma(fb, 1)
            elif op.name == "b":
                nbytes = ssum["k"] * self.cb
                nonempty, chunks = grid, grid
                L1 = L1 + self._dma(first_s["k"] * self.cb, 1)
            else:  # y: stores (partial-sum spills bounded below by nothing extra)
                nbytes = self._op_bytes("y", ssum, isum)
                nonempty = grid
                chunks = self._y_chunk_sum(n, ssum)
                lb = self._op_bytes("y", last_s, last_s)
                if exact_first:
                    lch = _hwc_chunks((last_s["n"], last_s["oy"], last_s["ox"], last_s["k"]),
                                      (nest.N, nest.OY, nest.OX, nest.K))
                else:
                    lch = 1
                ST = self._dma(lb, lch)
            ops[op.name] = (grid, nonempty,
                            nonempty * self.setup + chunks * self.cc
                            + nbytes / (self.bw_x if op.name == "x" else self.bw))
        return {"n": n, "comp": comp, "ops": ops, "L1": L1, "ST": ST}

    def combine(self, parts: dict, order: tuple[str, ...], buffering: int) -> np.ndarray:
        """`bound` for one loop order from `parts`: each operand's pass × its reload factor."""
        n = parts["n"]
        dma = 0.0
        transfers = 0
        for op in self.ops:
            grid, nonempty, one_pass = parts["ops"][op.name]
            if op.output and self.spill:
                reuse = 1                     # spilled partial sums: at least one pass
            else:
                masks = self._inner_masks(order, n, op.dims)
                fetches = np.ones(1, np.int64)
                for j, d in enumerate(order):
                    fetches = fetches * np.where(masks[j], 1, n[d])
                reuse = fetches // grid
            dma = dma + reuse * one_pass
            transfers = transfers + reuse * nonempty
        comp = parts["comp"] + self.issue * transfers
        if self.overlap and buffering == 2:
            return np.maximum(parts["L1"] + parts["ST"] + comp, dma) + self.layer_oh
        return comp + dma + self.layer_oh

    def _y_chunk_sum(self, n: dict, ssum: dict) -> np.ndarray:
        """Σ over output tiles of HWC chunks (outputs have no halo: sums are the full extents)."""
        N, OY, OX = ssum["n"], ssum["oy"], ssum["ox"]
        return np.where(n["k"] > 1, N * OY * OX * n["k"],
                        np.where(n["ox"] > 1, N * OY * n["ox"],
                                 np.where(n["oy"] > 1, N * n["oy"] * n["ox"],
                                          n["n"] * n["oy"] * n["ox"] * n["k"])))

    # -- one schedule ----------------------------------------------------------------------------
    def build(self, tile: dict[str, int], order: tuple[str, ...], buffering: int,
              tiler: str = "model") -> LayerSchedule:
        """The full `LayerSchedule` of one candidate."""
        sel = {d: np.array([tile[d]]) for d in self.dims}
        r = self.exact(sel, order, buffering)
        tiles = tuple(DimTiling(d, self.D[d], int(tile[d])) for d in self.dims)
        counts = {t.dim: t.count for t in tiles}
        scr = int(np.asarray(self.binding.scratch(
            self.nest, self.module.cores, np.array(tile["k"]),
            np.array(tile.get("c", tile["k"])), np.array(tile["oy"]), np.array(tile["ox"]))))
        bufs = plan_buffers(self.nest, tiles, order, buffering, self.cb, self.psum_bits,
                            self.spill, scr, consts_in_place=self.in_place,
                            operand_memory=self.module.operand_memory)
        traffic = tuple(Traffic(name, int(v[0][0]), int(v[1][0]), int(v[2][0]))
                        for name, v in r["ops"].items())
        l1 = sum(b.total for b in bufs)
        return LayerSchedule(
            nest=self.nest, target=self.target.name, module=self.module.name,
            level=self.module.memory, outer=self.target.outer(self.module.memory).name,
            tiles=tiles, loop_order=tuple(order), buffering=buffering, buffers=bufs,
            l1_bytes=l1, traffic=traffic, dma_bytes=sum(t.bytes for t in traffic),
            dma_transfers=sum(t.transfers for t in traffic), n_tiles=int(r["tiles"][0]),
            compute_cycles=float(r["compute"][0]), dma_cycles=float(r["dma"][0]),
            cycles=float(r["cycles"][0]), tiler=tiler,
            weights_tiled=self.nest.kind in REDUCING and counts.get("c", 1) > 1,
            const_bytes=self.cb, psum_bits=self.psum_bits, binding=self.binding.label,
            consts_in_place=self.in_place)


def band_cycles(nest: LoopNest, placement: Placement, first: bool) -> float:
    """The kernel's cycles on `nest` as one band of output rows of a fused chain
    (schedule/chain.py), without the module's fixed call cycles: its cost terms with the band's
    rows the layer's first output-row tile (`first`) or a later one — a term of the layer's first
    tile only (an add's tables, which its first band call builds and keeps) counts once."""
    dims = loop_dims(nest.kind)
    size = {d: np.ones((1, 1), np.int64) * dim_size(nest, d) for d in dims}
    one = {d: np.ones((1, 1), bool) for d in dims}
    at = {**one, "oy": np.full((1, 1), first)} if "oy" in dims else one
    return float(tile_cycles(placement.binding.cost.terms(nest, placement.module.cores), size, at,
                             one).sum())


def untiled_schedule(nest: LoopNest, target: Target, placement: Placement,
                     tiler: str = "model") -> LayerSchedule:
    """A layer run whole in place with no DMA (an untiled placement, placement.py): at the module's
    memory when the module computes from it, else at the next outer level (L2). Its kernel scratch,
    if any, sits at the start of the L1 arena and must fit there; a kernel that moves blocks
    through that scratch itself declares its DMA (Binding.own_dma), which the schedule counts."""
    module, binding = placement.module, placement.binding
    outer = target.outer(module.memory)
    level = module.memory if module.memory != "L1" or outer is None else outer.name
    dims = loop_dims(nest.kind)
    tiles = tuple(DimTiling(d, dim_size(nest, d), dim_size(nest, d)) for d in dims)
    size = {d: np.ones((1, 1), np.int64) * dim_size(nest, d) for d in dims}
    one = {d: np.ones((1, 1), bool) for d in dims}
    comp = float(tile_cycles(binding.cost.terms(nest, module.cores), size, one, one).sum())
    comp += module.fixed_cycles(binding.direct_call)
    c = nest.C if nest.kind in REDUCING else nest.K
    scr = int(np.asarray(binding.scratch(nest, module.cores, np.array(nest.K), np.array(c),
                                         np.array(nest.OY), np.array(nest.OX))))
    bufs = (Buffer("scratch", -(-scr // 4) * 4, 1, 0),) if scr else ()
    l1 = sum(b.total for b in bufs)
    if l1 and target.has_memory("L1") and l1 > target.memory("L1").free:
        raise TilewiseError(f"cannot fit: its {l1} bytes of kernel scratch exceed the "
                            f"{target.memory('L1').free} bytes of L1 free")
    # a kernel that streams its own blocks through L1 (Binding.own_dma) says what it moves
    traffic = tuple(Traffic(*t) for t in binding.own_dma(nest)) if binding.own_dma is not None else ()
    return LayerSchedule(
        nest=nest, target=target.name, module=module.name, level=level, outer=None,
        tiles=tiles, loop_order=dims, buffering=1, buffers=bufs,
        l1_bytes=l1, traffic=traffic, dma_bytes=sum(t.bytes for t in traffic),
        dma_transfers=sum(t.transfers for t in traffic),
        n_tiles=1, compute_cycles=comp, dma_cycles=0.0, cycles=comp, tiler=tiler,
        const_bytes=binding.const_bytes, psum_bits=binding.psum_bits, binding=binding.label)


def energy_pj(s: LayerSchedule, target: Target) -> float:
    """Energy of a schedule from the target's optional figures: the module's average pJ per
    cycle × cycles + the level's pJ per byte × bytes moved into it (0 where a figure is unknown)."""
    module = target.module(s.module)
    moved = target.memory(s.level).pj_per_byte * s.dma_bytes if s.outer else 0.0
    return module.pj_per_cycle * s.cycles + moved
