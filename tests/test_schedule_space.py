"""The schedule space: tile geometry, border tiles, HWC chunks, reuse by loop order, the L1
arena, and the explicit per-tile plan (`iter_tiles`) against the class-based cost model."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tilewise.bindings.cost_terms import tile_cycles
from tilewise.ir.layer import LoopNest
from tilewise.schedule.cost import Evaluator
from tilewise.schedule.space import (
    DimTiling,
    TilePos,
    fetch_count,
    hwc_chunks,
    inner_loops,
    iter_tiles,
    loop_dims,
    operands,
    positions,
    valid_order,
)
from tilewise.targets import get_target

from .placed import placed, seed002
from .pulp_targets import tiled


def conv(K, C, H, W, f=3, s=1, p=1, kind="conv", N=1, b=1):
    OY, OX = (H + 2 * p - f) // s + 1, (W + 2 * p - f) // s + 1
    return LoopNest(kind, K, C, OY, OX, f, f, s, s, (p, p, p, p), H, W, N, 8 * b, 8 * b, 8 * b)


def test_positions_border_halo_and_pads():
    n = conv(64, 32, 16, 16)                       # seed 004's benchmark layer
    assert positions(n, "oy", 5) == (
        TilePos(0, 0, 5, 0, 6, 1, 0), TilePos(1, 5, 5, 4, 7, 0, 0),
        TilePos(2, 10, 5, 9, 7, 0, 0), TilePos(3, 15, 1, 14, 2, 0, 1))
    assert positions(n, "oy", 16) == (TilePos(0, 0, 16, 0, 16, 1, 1),)
    assert positions(n, "k", 24) == (TilePos(0, 0, 24, 0, 24), TilePos(1, 24, 24, 24, 24),
                                     TilePos(2, 48, 16, 48, 16))
    # stride 2, no padding: input rows never needed are never loaded
    s2 = conv(8, 3, 10, 10, 3, 2, 0)
    assert [(p.in_start, p.in_size) for p in positions(s2, "oy", 3)] == [(0, 7), (6, 3)]
    # 5x5 kernel, pad 2, one-row tiles: the first two tiles are clipped by the padding
    k5 = conv(4, 4, 6, 6, 5, 1, 2)
    assert [(p.in_size, p.pad_lo, p.pad_hi) for p in positions(k5, "oy", 1)] == [
        (3, 2, 0), (4, 1, 0), (5, 0, 0), (5, 0, 0), (4, 0, 1), (3, 0, 2)]
    with pytest.raises(ValueError):
        positions(n, "ox", 17)


def test_dim_tiling_border():
    t = DimTiling("oy", 64, 56)
    assert (t.count, t.border) == (2, 8)
    assert (DimTiling("k", 64, 16).count, DimTiling("k", 64, 16).border) == (4, 16)


def test_hwc_chunks():
    full = (1, 16, 16, 32)
    assert hwc_chunks((1, 16, 16, 32), full) == 1      # whole tensor
    assert hwc_chunks((1, 4, 16, 32), full) == 1       # full rows x channels: one chunk
    assert hwc_chunks((1, 4, 8, 32), full) == 4        # partial rows: one chunk per row
    assert hwc_chunks((1, 4, 8, 16), full) == 32       # partial channels: one per pixel
    assert hwc_chunks((2, 16, 16, 32), (4, 16, 16, 32)) == 1
    assert hwc_chunks((1, 0, 8, 16), full) == 0


def test_dory_border_tile_example():
    """Seed 001 §6: layer 32x64x64x32 (CoHWCi), main tile 32x56x2x32 and border tile 32x8x2x32,
    each executed 32 times. The paper does not give the kernel or the L1 accounting that chose
    those tiles (notes/dory-tiler.md); what follows from the tile sizes is checked: 64 rows with a
    56-row main tile leave an 8-row border, and each runs once per 2-column tile, 32 times."""
    n = conv(32, 32, 64, 64, 3, 1, 1)
    t = get_target("gap8", l1_kb=28)
    ev = Evaluator(n, t, placed(t, n))
    s = ev.build({"n": 1, "k": 32, "c": 32, "oy": 56, "ox": 2}, ("n", "k", "oy", "ox", "c"), 2)
    rows = [st.pos["oy"].size for st in iter_tiles(s)]
    assert rows.count(56) == 32 and rows.count(8) == 32 and len(rows) == 64
    assert s.tiling("oy").border == 8 and s.n_tiles == 64


def test_reuse_by_loop_order():
    x, w, y = frozenset({"n", "c", "oy", "ox"}), frozenset({"k", "c"}), frozenset({"n", "k", "oy", "ox"})
    counts = {"n": 2, "k": 4, "c": 3, "oy": 5, "ox": 7}
    # inter-Kc: output resident over the innermost c loop
    order = ("n", "k", "oy", "ox", "c")
    assert fetch_count(order, counts, y) == 2 * 4 * 5 * 7
    assert fetch_count(order, counts, x) == 2 * 4 * 3 * 5 * 7
    # inter-Oc: input resident over k
    order = ("n", "oy", "ox", "c", "k")
    assert fetch_count(order, counts, x) == 2 * 5 * 7 * 3
    assert inner_loops(order, x, counts) == ("k",)
    # inter-OxOyOn: weights resident over n, oy, ox
    order = ("k", "c", "n", "oy", "ox")
    assert fetch_count(order, counts, w) == 4 * 3
    # a loop with one trip never forces a reload
    one = dict(counts, c=1)
    assert fetch_count(("n", "oy", "ox", "k", "c"), one, x) == 2 * 5 * 7
    assert valid_order(("k", "oy", "ox", "c"), {"k": 2, "c": 2, "oy": 2, "ox": 2}, False)
    assert not valid_order(("k", "c", "oy", "ox"), {"k": 2, "c": 2, "oy": 2, "ox": 2}, False)
    assert valid_order(("k", "c", "oy", "ox"), {"k": 2, "c": 1, "oy": 2, "ox": 2}, False)
    assert valid_order(("k", "c", "oy", "ox"), {"k": 2, "c": 2, "oy": 2, "ox": 2}, True)


def test_operands_per_kind():
    names = lambda kind: [o.name for o in operands(conv(4, 4, 6, 6, kind=kind))]  # noqa: E731
    assert names("conv") == ["x", "w", "b", "y"]
    assert names("dwconv") == ["x", "w", "b", "y"]
    assert names("add") == ["x", "x2", "y"]
    assert names("pool") == ["x", "y"]
    assert loop_dims("fc") == ("n", "k", "c", "oy", "ox")
    assert loop_dims("dwconv") == ("n", "k", "oy", "ox")


# --- iter_tiles (what codegen executes) against the class-based evaluator -------------------------

def _simulate(s, ev):
    """Walk every tile: kernel terms per tile, DMA per transfer, the async/blocking formula."""
    m = ev.module
    terms = ev.binding.cost.terms(s.nest, m.cores)
    dma = lambda t: ev.setup + t.chunks * ev.cc + t.bytes / ev.bw  # noqa: E731
    C, L, S = [], [], []
    counts = {t.dim: t.count for t in s.tiles}
    traffic: dict[str, list[int]] = {}
    for st in iter_tiles(s):
        size = {d: np.array(p.size) for d, p in st.pos.items()}
        first = {d: np.array(p.index == 0) for d, p in st.pos.items()}
        last = {d: np.array(p.index == counts[d] - 1) for d, p in st.pos.items()}
        n_tr = len(st.loads) + len(st.stores)
        C.append(float(tile_cycles(terms, size, first, last)) + ev.issue * n_tr)
        L.append(sum(dma(t) for t in st.loads))
        S.append(sum(dma(t) for t in st.stores))
        for t in st.loads + st.stores:
            acc = traffic.setdefault(t.operand, [0, 0, 0])
            acc[0] += 1
            acc[1] += t.chunks
            acc[2] += t.bytes
    T = len(C)
    if ev.overlap and s.buffering == 2 and T > 1:
        body = sum(max(c, l + s_ - (l if i == 0 else 0) - (s_ if i == T - 1 else 0))
                   for i, (c, l, s_) in enumerate(zip(C, L, S)))
        cycles = L[0] + S[-1] + body
    else:
        cycles = sum(C) + sum(L) + sum(S)
    # the module's fixed cost once per layer, counted as compute (schedule/cost.py)
    return cycles + ev.layer_oh, sum(C) + ev.layer_oh, sum(L) + sum(S), traffic


CASES = [
    ("gap8", conv(64, 32, 16, 16), {"k": 24, "c": 32, "oy": 5, "ox": 16}),
    ("gap8", conv(64, 32, 16, 16), {"k": 64, "c": 12, "oy": 6, "ox": 7}),
    ("gap8", conv(10, 7, 11, 9, 3, 2, 1), {"k": 4, "c": 3, "oy": 2, "ox": 3}),
    ("gap8", conv(9, 5, 7, 7, 5, 1, 2), {"k": 9, "c": 2, "oy": 1, "ox": 4}),
    ("gap8", conv(12, 12, 9, 10, 3, 2, 1, kind="dwconv"), {"k": 5, "oy": 2, "ox": 5}),
    ("gap8", conv(16, 16, 6, 6, 2, 2, 0, kind="pool"), {"k": 6, "oy": 2, "ox": 3}),
    ("gap8", conv(16, 16, 5, 7, 1, 1, 0, kind="add"), {"k": 16, "oy": 2, "ox": 7}),
    ("stm32h7", conv(7, 20, 1, 1, 1, 1, 0, kind="fc"), {"k": 3, "c": 6, "oy": 1, "ox": 1}),
    ("gap8", conv(8, 6, 6, 6, 3, 1, 1, N=3), {"n": 2, "k": 3, "c": 6, "oy": 4, "ox": 6}),
    ("idsp", conv(8, 6, 6, 6, 3, 1, 0, N=2, b=2), {"n": 1, "k": 3, "c": 4, "oy": 4, "ox": 2}),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_iter_tiles_matches_the_cost_model(case):
    tname, nest, tile = CASES[case]
    target = tiled(tname)
    p = seed002(target, nest) if tname == "idsp" else placed(target, nest)   # idsp: spilled psums
    ev = Evaluator(nest, target, p)
    tile = {"n": 1, **tile}
    rng = random.Random(case)
    orders = [ev.dims]
    for _ in range(4):
        o = list(ev.dims)
        rng.shuffle(o)
        if "c" in o and not ev.spill:       # partial sums stay in L1: c innermost
            o.remove("c")
            o.append("c")
        orders.append(tuple(o))
    counts = {d: -(-ev.D[d] // tile[d]) for d in ev.dims}
    for order in orders:
        if not valid_order(order, counts, ev.spill):
            continue
        for buf in (1, 2):
            s = ev.build(tile, order, buf)
            cycles, comp, dma, traffic = _simulate(s, ev)
            assert s.cycles == pytest.approx(cycles, rel=1e-9)
            assert s.compute_cycles == pytest.approx(comp, rel=1e-9)
            assert s.dma_cycles == pytest.approx(dma, rel=1e-9)
            got = {t.operand: [t.transfers, t.chunks, t.bytes] for t in s.traffic if t.transfers}
            assert got == traffic
            assert s.dma_bytes == sum(v[2] for v in traffic.values())
            # every input element is loaded at least once, every output stored exactly once
            # (partial-sum spills aside)
            if not ev.spill:
                assert traffic["y"][2] == nest.output_elems * nest.y_bits // 8
            sel = {d: np.array([v]) for d, v in tile.items() if d in ev.dims}
            assert s.l1_bytes == int(ev.l1_bytes(sel, order, buf)[0])


def test_buffers_layout():
    n = conv(64, 32, 16, 16)
    t = get_target("gap8")
    p = placed(t, n)
    ev = Evaluator(n, t, p)
    # k outermost: weights fetched once per k tile -> double-buffered only if k has 2+ tiles
    s = ev.build({"n": 1, "k": 64, "c": 32, "oy": 4, "ox": 16}, ("n", "k", "oy", "ox", "c"), 2)
    b = {x.name: x for x in s.buffers}
    assert b["w"].copies == 1 and b["b"].copies == 1      # one k tile: loaded once
    assert b["x"].copies == 2 and b["y"].copies == 2
    assert b["x"].bytes == 6 * 16 * 32                    # 4 rows + halo, full width, all C
    assert b["w"].bytes == 64 * 9 * 32 and b["b"].bytes == 64 * p.binding.const_bytes
    assert b["scratch"].bytes == 8 * 2 * 9 * 32           # im2col: 2 receptive fields per core
    assert "psum" not in b
    ends = 0
    for x in s.buffers:                                   # contiguous, 4-byte aligned
        assert x.offset == ends and x.offset % 4 == 0
        ends += x.total
    assert s.l1_bytes == ends
    # C tiled: int32 partial sums in L1, weights stored tile-major
    s = ev.build({"n": 1, "k": 16, "c": 8, "oy": 4, "ox": 16}, ("n", "k", "oy", "ox", "c"), 1)
    assert s.psum and s.weights_tiled
    assert s.buffer("psum").bytes == 4 * 16 * 4 * 16
    assert all(x.copies == 1 for x in s.buffers)
