"""DORY's L2→L1 tiling as constraint programming (seed 001 §4.2), solved with OR-Tools CP-SAT.

Seed 001 maximizes α(L1x + L1y + L1w) + Σᵢ βᵢ·Hᵢ subject to the tile buffers (twice, double
buffered) plus the backend's scratch fitting L1, with the input channels C and the kernel never
tiled (Ctx = Cx). The four PULP-NN heuristics (§4.2.2) are HIDE_IM2COL H = Cty, PAR_BALANCE
H = (hty − 1) mod 8, MATMUL_W H = (wty − 1) mod 2, MATMUL_CH H = (Cty − 1) mod 4. The constants
the open-source tiler actually uses, the memory accounting and the depthwise/pool/add variants are
taken from notes/dory-tiler.md; three objective sets are available:

- ``code`` (default): the open-source tiler's weights as the note gives them — memory term ×1,
  2·10⁶ PAR_BALANCE, 3·10⁶ MATMUL_W, 10⁶ MATMUL_CH, 10⁶·[hty·wty ≥ 16], 10⁵·Cty (HIDE_IM2COL),
  border-tile terms 10⁴·((K−1) mod Cty), 10⁴·(((K−1) mod Cty) mod 4), 2·10⁴·(((OY−1) mod hty) mod 8),
  3·10⁴·(((OX−1) mod wty) mod 2);
- ``paper``: α = 0.5, β_HIDE_IM2COL = 10², other β = 10⁶ (§5), nothing else;
- ``dory2020``: the weights of the 2020 release that the paper's experiments ran (tiling.py of
  pulp-platform/dory at the time): the same shape terms with the memory term ×4 relative to them,
  10⁴·Cty, 2·10⁴·(K mod (Cty+1)) + 10⁴·((K mod (Cty+1)) mod 4), 2·10⁴·((OY mod (hty+1)) mod 8) and
  3·10⁴·((OX mod (wty+1)) mod 2) — the border terms of that release use `mod (t + 1)`, which is
  what makes the paper's 56-row main tile optimal (tests/test_dory_tiler.py).

Depthwise layers use the open-source depthwise heuristics under every objective set:
10⁴·[Cty > 7] + 2·10⁴·((Cty − 1) mod 16) + 10⁴·[hty mod 4 = 0] + 10³·(hty + wty)
+ 10²·((OY−1) mod hty) + 10²·((OX−1) mod wty) + 10²·[((K−1) mod Cty) > 7]
+ 10²·(((OY−1) mod hty) mod 4), plus the memory term.

Memory accounting (bytes, the open-source tiler's): L1 ≥ db·(x + y + w + Cty·chan_const) + scratch
+ 20, db = 2 when double buffered; x = C·htx·wtx (two inputs for add), y = Cty·hty·wty,
w = Cty·C·FY·FX (depthwise Cty·FY·FX; weights stored below 8 bits Cty·⌈C·FY·FX·bits/8⌉);
scratch = im2col 2·C·FY·FX per core (conv), cores·(FY·(htx + pad_top + pad_bottom) + FY)
(depthwise), 0 (fc, pool, add). Interior input tiles hold
htx = min(IY, (hty − 1)·SY + FY) rows (the full input when the tile spans all output rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ortools.sat.python import cp_model

from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..ir.operands import whole_bytes

Objective = Literal["code", "paper", "dory2020"]
OBJECTIVES: tuple[str, ...] = ("code", "paper", "dory2020")
#: layer kinds the DORY tiler handles (gap is a pool whose window is the whole input)
DORY_KINDS = ("conv", "dwconv", "fc", "pool", "gap", "add")


@dataclass(frozen=True)
class DoryTile:
    """DORY's answer for one layer: the L1 tile of each loop dimension (C and F never tiled)."""

    K: int
    OY: int
    OX: int
    #: input tile rows/columns (with halo) and channels
    IY: int
    IX: int
    C: int
    #: L1 bytes of the accounting above for this tile (double buffering included)
    l1_bytes: int
    #: objective value at the optimum (in the objective set's integer units)
    objective: int
    #: "untiled" (the layer fits L1 whole: DORY's early exit) or the CP-SAT status name
    status: str
    #: objective set used
    objective_set: str
    double_buffer: bool


@dataclass(frozen=True)
class _Sizes:
    """Per-kind constants of the memory accounting."""

    in_factor: int      # 2 for add (two inputs), else 1
    chan_tied: bool     # input channel tile follows the output channel tile (dw, pool, add)
    weights: str        # "full" (K·C·F), "dw" (K·F), "none"
    scratch: str        # "im2col", "dw", "none"
    chan_const: int     # bytes of per-output-channel constants (bias, requant)


def _sizes(nest: LoopNest, chan_const_bytes: int) -> _Sizes:
    k = nest.kind
    if k == "conv":
        return _Sizes(1, False, "full", "im2col", chan_const_bytes)
    if k == "fc":
        return _Sizes(1, False, "full", "none", chan_const_bytes)
    if k == "dwconv":
        return _Sizes(1, True, "dw", "dw", chan_const_bytes)
    if k in ("pool", "gap"):
        return _Sizes(1, True, "none", "none", 0)
    if k == "add":
        return _Sizes(2, True, "none", "none", 0)
    raise TilewiseError(f"the dory tiler does not handle layers of kind '{k}' (it tiles "
                        f"{', '.join(DORY_KINDS)}); use --tiler model")


def tile_l1_bytes(nest: LoopNest, k: int, oy: int, ox: int, *, cores: int = 8,
                  double_buffer: bool = True, chan_const_bytes: int = 8) -> int:
    """The DORY L1 accounting for an output tile k×oy×ox (plain integers; mirrors the CP model)."""
    sz = _sizes(nest, chan_const_bytes)
    iy = min(nest.IY, (oy - 1) * nest.SY + nest.FY)
    ix = min(nest.IX, (ox - 1) * nest.SX + nest.FX)
    c = _in_channels(nest, k) if sz.chan_tied else nest.C
    x = sz.in_factor * c * iy * ix * whole_bytes(nest.x_bits)
    y = k * oy * ox * whole_bytes(nest.y_bits)
    w = k * _w_channel_bytes(nest, sz.weights)
    db = 2 if double_buffer else 1
    return db * (x + y + w + k * sz.chan_const) + _scratch(nest, sz, iy, cores) + 20


def _w_channel_bytes(nest: LoopNest, weights: str) -> int:
    """Bytes of one output channel's weights ("full": C·FY·FX, "dw": FY·FX, "none": 0), packed
    to ⌈elements·w_bits/8⌉ when the binding stores them below 8 bits (DIANA's 2-bit codes)."""
    n = {"full": nest.C * nest.FY * nest.FX, "dw": nest.FY * nest.FX, "none": 0}[weights]
    return -(-n * nest.w_bits // 8)


def _in_channels(nest: LoopNest, k: int) -> int:
    if nest.kind == "dwconv" and nest.K != nest.C:
        return max(1, k * nest.C // nest.K)
    return k


def _scratch(nest: LoopNest, sz: _Sizes, iy: int, cores: int) -> int:
    if sz.scratch == "im2col":
        return 2 * nest.C * nest.FY * nest.FX * cores * whole_bytes(nest.x_bits)
    if sz.scratch == "dw":
        pt, _, pb, _ = nest.pads
        return cores * (nest.FY * (iy + pt + pb) + nest.FY)
    return 0


def _fixed_dims(nest: LoopNest) -> tuple[bool, bool]:
    """(rows fixed, cols fixed) at their full extent by the backend (fc; small depthwise)."""
    if nest.kind == "fc":
        return True, True
    if nest.kind == "dwconv":
        if nest.IY <= 32 and nest.IX <= 32:
            return True, True
        return False, True
    return False, False


def solve_dory(
    nest: LoopNest, l1_bytes: int, *, cores: int = 8, double_buffer: bool = True,
    objective: Objective = "code", chan_const_bytes: int = 8, layer_name: str | None = None,
    time_limit_s: float = 10.0, num_workers: int = 1, k_tile: int | None = None,
) -> DoryTile:
    """Solve DORY's tiling problem for one layer; raises TilewiseError when no tile fits L1.

    `layer_name` only words the error ("layer 'x' cannot ..."; without it "this conv layer ...").
    `k_tile` imposes the output-channel tile (the binding's tile rules: L2 tiles of one L3-tiled
    layer that share a constant blob lay it out alike).
    """
    who = f"layer '{layer_name}'" if layer_name else f"this {nest.kind} layer"
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown DORY objective set {objective!r}")
    sz = _sizes(nest, chan_const_bytes)
    kw = dict(cores=cores, chan_const_bytes=chan_const_bytes)
    whole = tile_l1_bytes(nest, nest.K, nest.OY, nest.OX, double_buffer=False, **kw)
    if whole <= l1_bytes and k_tile in (None, nest.K):  # DORY's early exit: one tile, no double buffering
        return DoryTile(nest.K, nest.OY, nest.OX, nest.IY, nest.IX, nest.C, whole, 0, "untiled",
                        objective, False)
    fix_h, fix_w = _fixed_dims(nest)
    k_step = nest.K // nest.C if (nest.kind == "dwconv" and nest.K % nest.C == 0) else 1
    k_min = k_step if k_tile is None else min(k_tile, nest.K)
    smallest = tile_l1_bytes(nest, k_min, nest.OY if fix_h else 1, nest.OX if fix_w else 1,
                             double_buffer=double_buffer, **kw)
    if smallest > l1_bytes:
        what = ("it never tiles the input channels or the kernel"
                if nest.kind in ("conv", "fc") else "its smallest tile is too large")
        raise TilewiseError(
            f"{who} cannot be tiled by DORY's formulation into L1 of {l1_bytes} "
            f"bytes: {what} (C={nest.C}, kernel {nest.FY}x{nest.FX}), and its smallest tile needs "
            f"{smallest} bytes; use --tiler model or a larger --l1.")

    m = cp_model.CpModel()
    K, OY, OX = nest.K, nest.OY, nest.OX
    kt = m.NewIntVar(k_min, K, "Cty")
    if k_tile is not None:
        m.Add(kt == min(k_tile, K))
    if k_step > 1:
        kq = m.NewIntVar(1, K // k_step, "Cty_q")
        m.Add(kt == k_step * kq)
    ht = m.NewIntVar(OY if fix_h else 1, OY, "hty")
    wt = m.NewIntVar(OX if fix_w else 1, OX, "wty")
    hx = m.NewIntVar(1, nest.IY, "htx")
    wx = m.NewIntVar(1, nest.IX, "wtx")
    m.AddMinEquality(hx, [nest.IY, (ht - 1) * nest.SY + nest.FY])
    m.AddMinEquality(wx, [nest.IX, (wt - 1) * nest.SX + nest.FX])

    if sz.chan_tied:
        if nest.kind == "dwconv" and k_step > 1:
            cx = kq
        else:
            cx = kt
        c_hi = nest.C
    else:
        cx, c_hi = nest.C, nest.C
    x_el = m.NewIntVar(0, c_hi * nest.IY * nest.IX, "x_elems")
    m.AddMultiplicationEquality(x_el, [cx, hx, wx] if sz.chan_tied else [hx, wx])
    x_bytes = sz.in_factor * whole_bytes(nest.x_bits) * (x_el if sz.chan_tied else nest.C * x_el)
    y_el = m.NewIntVar(0, K * OY * OX, "y_elems")
    m.AddMultiplicationEquality(y_el, [kt, ht, wt])
    y_bytes = whole_bytes(nest.y_bits) * y_el
    w_bytes = _w_channel_bytes(nest, sz.weights) * kt
    db = 2 if double_buffer else 1
    if sz.scratch == "dw":
        pt, _, pb, _ = nest.pads
        scratch = cores * (nest.FY * (hx + pt + pb) + nest.FY)
    else:
        scratch = _scratch(nest, sz, 0, cores)
    tiles = x_bytes + y_bytes + w_bytes + sz.chan_const * kt
    mem = db * tiles + scratch + 20
    m.Add(mem <= l1_bytes)

    def mod(expr, by, name: str, hi: int) -> cp_model.IntVar:
        v = m.NewIntVar(0, hi, name)
        m.AddModuloEquality(v, expr, by)
        return v

    def flag(cond_true, cond_false, name: str) -> cp_model.IntVar:
        b = m.NewBoolVar(name)
        m.Add(cond_true).OnlyEnforceIf(b)
        m.Add(cond_false).OnlyEnforceIf(b.Not())
        return b

    terms = []
    if nest.kind == "dwconv":
        kb = mod(K - 1, kt, "k_border", K)
        hb = mod(OY - 1, ht, "h_border", OY)
        h4 = mod(ht, 4, "h_m4", 3)
        terms += [
            mem, 10_000 * flag(kt >= 8, kt <= 7, "k_gt7"),
            20_000 * mod(kt - 1, 16, "k_m16", 15),
            10_000 * flag(h4 == 0, h4 >= 1, "h4"),
            1_000 * ht, 1_000 * wt, 100 * hb, 100 * mod(OX - 1, wt, "w_border", OX),
            100 * flag(kb >= 8, kb <= 7, "kb_gt7"), 100 * mod(hb, 4, "hb_m4", 3),
        ]
    else:
        par = mod(ht - 1, cores, "par_balance", cores - 1)
        mmw = mod(wt - 1, 2, "matmul_w", 1)
        mmc = mod(kt - 1, 4, "matmul_ch", 3)
        if objective == "paper":
            # 2 × (0.5·memory + 10²·Cty + 10⁶·ΣH): integers
            mem_paper = x_bytes + y_bytes + w_bytes
            terms += [mem_paper, 200 * kt, 2_000_000 * (par + mmw + mmc)]
        else:
            hw = m.NewIntVar(1, OY * OX, "hw")
            m.AddMultiplicationEquality(hw, [ht, wt])
            big = flag(hw >= 16, hw <= 15, "hw_ge16")
            terms += [2_000_000 * par, 3_000_000 * mmw, 1_000_000 * mmc, 1_000_000 * big]
            if objective == "code":
                kb = mod(K - 1, kt, "k_border", K)
                terms += [
                    mem, 100_000 * kt, 10_000 * kb, 10_000 * mod(kb, 4, "kb_m4", 3),
                    20_000 * mod(mod(OY - 1, ht, "h_border", OY), 8, "hb_m8", 7),
                    30_000 * mod(mod(OX - 1, wt, "w_border", OX), 2, "wb_m2", 1),
                ]
            else:  # dory2020
                kt1 = m.NewIntVar(k_min + 1, K + 1, "Cty_p1")
                m.Add(kt1 == kt + 1)
                ht1 = m.NewIntVar(2, OY + 1, "hty_p1")
                m.Add(ht1 == ht + 1)
                wt1 = m.NewIntVar(2, OX + 1, "wty_p1")
                m.Add(wt1 == wt + 1)
                kr = mod(K, kt1, "k_rem", K)
                terms += [
                    4 * mem, 10_000 * kt, 20_000 * kr, 10_000 * mod(kr, 4, "kr_m4", 3),
                    20_000 * mod(mod(OY, ht1, "h_rem", OY), 8, "hr_m8", 7),
                    30_000 * mod(mod(OX, wt1, "w_rem", OX), 2, "wr_m2", 1),
                ]
    m.Maximize(sum(terms))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = num_workers
    solver.parameters.random_seed = 0
    status = solver.Solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise TilewiseError(f"{who}: CP-SAT found no DORY tiling within "
                            f"{time_limit_s:g} s ({solver.StatusName(status)}); use --tiler model.")
    k, h, w = solver.Value(kt), solver.Value(ht), solver.Value(wt)
    used = tile_l1_bytes(nest, k, h, w, double_buffer=double_buffer, **kw)
    return DoryTile(k, h, w, solver.Value(hx), solver.Value(wx),
                    _in_channels(nest, k) if sz.chan_tied else nest.C, used,
                    int(solver.ObjectiveValue()), solver.StatusName(status), objective, double_buffer)
