"""The portable family's cost models: per-tile compute cycles from a kernel library's loop structure.

The portable kernels (bindings/portable) are priced, per module, by the model of the library a
target's core stands for — PULP-NN on a RI5CY core (DIANA's host, MATCH's GAP9 cluster), CMSIS-NN on
a Cortex-M7 (the IDSP's host), the IDSP's SIMD throughput — and their sub-byte kernels by their own
(`SubByteScalar`). Each model is frozen data (its constants) plus `terms(nest, cores)` returning
separable terms (bindings/cost_terms.py); a target's file gives per-chip coefficients
(`replace(PulpNN(), ...)`). A binding (bindings/) pairs a model with the kernel it prices; the
kernel's L1 scratch is the binding's formula, not the model's.

PulpNN — the PULP-NN kernels on RI5CY/XpulpV2 clusters (seed 004 ch. 3, seed 001 §3.3):
- conv (incl. 1×1): output rows split over cores (the slowest core has ceil(oy/cores) rows); each
  core walks its pixels in pairs: im2col of two receptive fields (none for 1×1, HWC pixels are
  already contiguous) then the 4×2 MatMul — 4 output channels × 2 pixels, inner loop 6 loads +
  8 sdotp4 = 32 MACs in `mm_4x2` cycles over ⌊FY·FX·c/4⌋ iterations; reduction leftovers (mod 4)
  run scalar at the same cost per element; leftover channels (k mod 4) use the 1×2 loop; an odd
  last pixel the 4×1 / 1×1 loops. Per output: requantization `(k·φ+λ)>>d` + clip + store. With C
  tiled: bias on the first c tile, int32 partial-sum load/store in between, requant on the last.
- depthwise (DORY's HWC kernel): channels split over cores; per channel and output column the
  FX × padded-rows column is gathered from HWC, then per output FY·⌈FX/4⌉ × (2 loads + sdotp4).
- dense: output neurons split over cores, 2×1 kernel (3 loads + 2 sdotp4 = 8 MACs); the
  instruction counts are scaled by the kernel's measured cycles per instruction (`fc_cpi`, seed 004
  Table 3.2: 33k cycles / 20.7k instructions on one core).
- pool / add / global pool: SIMD over 4 channels, rows (channels for global pool) over cores.
- multi-core: a slowdown of 1 + contention·(cores−1)² for I$ and TCDM conflicts (seed 004 Table
  3.2: 1.00 / 1.005 / 1.02 / 1.12 of ideal at 1 / 2 / 4 / 8 cores).
- depthwise on GAP9 (`dw_flat`): pulp_nn_depthwise_generic as MATCH's GAP9 cluster model gives it
  (eml-eda/match, match/cost_model/examples/pulp_cluster.py): per output ⌈F/4⌉ × (2·3 + 1) SIMD
  steps + (F mod 4) × (2·2 + 2) scalar taps + two loop setups (2 × (5 + 10)) + requant 9; per
  channel and output column an im2col of one cycle per byte. Seed 003 §VI-A reports silicon
  reaching at most 88% of that model's depthwise estimate, and its 9.48× (depthwise) vs 104×
  (dense) cluster-over-TVM speed-ups put cluster depthwise near 1 MAC/cycle — what this gives.
Calibrated on seed 004's benchmark layer (16×16×32 → 16×16×64, 3×3, pad 1): 2,586k cycles on
1 core, 361k on 8 (tests/test_cost_model.py holds the prediction within 15%). Checked without
refitting on seed 004 §3.5's whole CIFAR-10 network (ARM's cmsisnn-cifar10: 5×5 convs with C = 3,
32, 16, three 3×3/2 max pools, FC 512→10; 6.56M MACs): 28.6 ms on one core and 241 fps on eight at
170 MHz, i.e. 4.86M and 0.705M cycles, which the kernel model meets within a few percent.

CmsisNN — CMSIS-NN on a Cortex-M7 (STM32H7), single core: im2col to q15 then the 2×2 MatMul
(2 channels × 2 pixels, SMLAD dual 16-bit MACs); calibrated to seed 004 §3.4.1: PULP-NN on one
GAP8 core is 2.54× faster on the benchmark layer.

SimdDsp — seed 002's IDSP: CC_tile = N_MACs / DSP throughput (eq. 5.10), nothing else; the
throughput of conv / depthwise / dense halves when the module's accumulators are wider than the
native 16 bits (seed 002 §3.2, emulated 32-bit accumulators; `for_acc_bits`).

SubByteScalar — the portable sub-byte kernels (bindings/portable/subbyte.py: tw_sb_conv,
tw_sb_maxpool, the reshape's byte copy), one core, per element unpacking, fitted on GVSoC's
pulp-open host core (`validate --on gvsoc`, a 2-bit conv 6×6×3→8 3×3, max pool, conv 3×3×8→8,
dense 72→5, onnx requant): 92.5 cycles per MAC and 2,332 per output (the onnx requantization's
software float on a core without FPU dominates it), max pool 150 per tap and 100 per output; the
same figures are ASSUMED for the other host cores (Cortex-M7, the idsp host) and the other
requant modes. It prices other C than the module's int8 model, so the host modules' sub-byte
bindings take it, not that model (subbyte.bindings).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...ir.layer import LoopNest
from ..cost_terms import (
    Term,
    ceil4,
    ceil_div,
    ident,
    lin,
    not_first,
    not_last,
    on_last,
    parity,
    parity_of_ceil,
    per_image,
)


def _q(L: int):
    """Factor on c: SIMD iterations + leftover elements of a reduction of length L(c) = m·c."""
    def f(s, first, last):
        n = L * s
        return (n // 4 + n % 4).astype(np.float64)
    return f




def _blk(w: int):
    def f(s, first, last):
        return (s // w).astype(np.float64)
    return f


def _left(w: int):
    def f(s, first, last):
        return (s % w).astype(np.float64)
    return f


def _ceil_blk(n: int, w: int):
    """⌊ceil(size/n) / w⌋ and its leftover: per-core blocks of w."""
    def blk(s, first, last):
        return (np.ceil(s / n) // w).astype(np.float64)

    def left(s, first, last):
        return (np.ceil(s / n) % w).astype(np.float64)
    return blk, left










@dataclass(frozen=True)
class PulpNN:
    """PULP-NN on RI5CY cores (see module docstring). Cycle constants per core."""

    name: str = "pulp-nn"
    mm_4x2: float = 14.0       # 6 lw + 8 sdotp4 per inner iteration (seed 001 §3.3)
    mm_1x2: float = 5.0        # leftover channel: 3 lw + 2 sdotp4
    mm_4x1: float = 9.0        # odd pixel: 5 lw + 4 sdotp4
    mm_1x1: float = 3.0        # 2 lw + 1 sdotp4
    block: float = 20.0        # per 4-channel block: pointers, 8 accumulator inits, loop setup
    block1: float = 8.0        # per leftover channel
    requant: float = 10.0      # per output: (k·φ+λ)>>d, clip, pack/store
    im2col_byte: float = 3.0   # per byte copied into im2col (lbu/sb + address update)
    im2col_pos: float = 10.0   # per kernel position per pixel (pointer, padding checks)
    psum: float = 3.0          # per output per partial-sum load or store (int32, C tiled)
    call: float = 200.0        # per kernel call: fork, barrier, argument setup
    contention: float = 0.0024  # slowdown per (cores−1)²
    dw_gather: float = 3.0     # depthwise: per byte gathered into the column buffer
    dw_out: float = 12.0       # depthwise: per output beyond the MACs (requant, store, loop)
    dw_channel: float = 30.0   # depthwise: per channel (weight unpack, pointers)
    dw_simd: float = 3.0       # depthwise: per SIMD step of 4 taps (2 loads + sdotp4)
    #: depthwise window walked flat (FY·FX taps: ⌈F/4⌉ SIMD steps + F mod 4 scalar taps, as
    #: pulp_nn_depthwise_generic on CHW tiles) instead of row by row (FY·⌈FX/4⌉ SIMD steps)
    dw_flat: bool = False
    dw_tap: float = 0.0        # depthwise, flat window: per leftover scalar tap
    #: dense: cycles per counted instruction; seed 004 Table 3.2 measures the linear kernel at
    #: 33k cycles for 20.7k instructions on one core (4.4k for 2.6k on eight), the stall columns
    #: explaining none of it, while the fc_* constants below count instructions
    fc_cpi: float = 33.0 / 20.7
    fc_2x1: float = 5.0        # dense: 3 lw + 2 sdotp4 for 2 neurons × 4 inputs
    fc_1x1: float = 3.0        # dense leftover neuron
    fc_neuron: float = 14.0    # dense: per neuron overhead + requant
    pool_win: float = 2.0      # pool: per window element per 4 channels (lw + max4/add4)
    pool_out: float = 4.0      # pool: per output element (avg: requant)
    add_elem: float = 6.0      # add: per output element (two loads, rescale, clip, store)
    gap_elem: float = 1.0      # global pool: per input element
    other_elem: float = 30.0   # softmax & co: per element, one core
    #: multiplies everything (e.g. a core computing straight from L2 pays wait states)
    scale: float = 1.0

    def _k(self, cores: int) -> float:
        return self.scale * (1.0 + self.contention * (cores - 1) ** 2)

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        """Per-tile cycles; a batch tile of n images costs n kernel calls."""
        return per_image(self._terms(nest, cores))

    def _terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        kind = nest.kind
        g = self._k(cores)
        P = max(cores, 1)
        if kind == "conv":
            F = nest.FY * nest.FX
            rows = ("oy", ceil_div(P))
            odd = [("oy", parity_of_ceil(P)), ("ox", parity)]
            t = [
                Term(g * 0.5 * self.mm_4x2, (rows, ("ox", ident), ("k", _blk(4)), ("c", _q(F))),
                     "mm4x2"),
                Term(g * 0.5 * self.block, (rows, ("ox", ident), ("k", _blk(4))), "block"),
                Term(g * 0.5 * self.mm_1x2, (rows, ("ox", ident), ("k", _left(4)), ("c", _q(F))),
                     "mm1x2"),
                Term(g * 0.5 * self.block1, (rows, ("ox", ident), ("k", _left(4))), "block1"),
                # odd pixel on the slowest core: single-pixel loops minus half a pair
                Term(g * (self.mm_4x1 - 0.5 * self.mm_4x2),
                     (*odd, ("k", _blk(4)), ("c", _q(F))), "odd4"),
                Term(g * (self.mm_1x1 - 0.5 * self.mm_1x2),
                     (*odd, ("k", _left(4)), ("c", _q(F))), "odd1"),
                Term(g * 0.5 * self.block, (*odd, ("k", _blk(4))), "oddblock"),
                Term(g * 0.5 * self.block1, (*odd, ("k", _left(4))), "oddblock1"),
                Term(g * self.requant, (rows, ("ox", ident), ("k", ident), ("c", on_last)),
                     "requant"),
                Term(g * self.psum, (rows, ("ox", ident), ("k", ident), ("c", not_last)),
                     "psum_store"),
                Term(g * self.psum, (rows, ("ox", ident), ("k", ident), ("c", not_first)),
                     "psum_load"),
                Term(g * self.call, (), "call"),
            ]
            if F > 1:
                t.append(Term(g * F, (rows, ("ox", ident),
                                      ("c", lin(self.im2col_byte, self.im2col_pos))), "im2col"))
            return tuple(t)
        if kind == "dwconv":
            ch = ("k", ceil_div(P))
            sy, fy, fx = nest.SY, nest.FY, nest.FX
            if self.dw_flat:
                F = fy * fx
                macs_out = -(-F // 4) * self.dw_simd + (F % 4) * self.dw_tap
            else:
                macs_out = fy * -(-fx // 4) * self.dw_simd
            return (
                # gather FX columns × padded rows ((oy−1)·SY + FY) per channel and output column
                Term(g * self.dw_gather * fx, (ch, ("ox", ident), ("oy", lin(sy, fy - sy))),
                     "dw_gather"),
                Term(g * (macs_out + self.dw_out), (ch, ("ox", ident), ("oy", ident)), "dw_mac"),
                Term(g * (self.dw_channel + 2.0 * fy * fx), (ch,), "dw_channel"),
                Term(g * self.call, (), "call"),
            )
        if kind == "fc":
            blk, left = _ceil_blk(P, 2)
            gf = g * self.fc_cpi
            return (
                Term(gf * self.fc_2x1, (("k", blk), ("c", _q(1))), "fc2x1"),
                Term(gf * self.fc_1x1, (("k", left), ("c", _q(1))), "fc1x1"),
                Term(gf * self.fc_neuron, (("k", ceil_div(P)), ("c", on_last)), "fc_neuron"),
                Term(g * self.psum, (("k", ceil_div(P)), ("c", not_last)), "psum_store"),
                Term(g * self.psum, (("k", ceil_div(P)), ("c", not_first)), "psum_load"),
                Term(g * self.call, (), "call"),
            )
        if kind == "pool":
            return (
                Term(g * self.pool_win * nest.FY * nest.FX,
                     (("oy", ceil_div(P)), ("ox", ident), ("k", ceil4)), "pool_win"),
                Term(g * self.pool_out, (("oy", ceil_div(P)), ("ox", ident), ("k", ident)),
                     "pool_out"),
                Term(g * self.call, (), "call"),
            )
        if kind == "gap":
            return (
                Term(g * self.gap_elem * nest.FY * nest.FX, (("k", ceil_div(P)),), "gap_in"),
                Term(g * self.pool_out, (("k", ceil_div(P)),), "gap_out"),
                Term(g * self.call, (), "call"),
            )
        if kind == "add":
            return (
                Term(g * self.add_elem, (("oy", ceil_div(P)), ("ox", ident), ("k", ident)),
                     "add"),
                Term(g * self.call, (), "call"),
            )
        # other: one core, per element of input and output
        return (Term(self.scale * self.other_elem,
                     (("oy", ident), ("ox", ident), ("k", ident)), "other"),
                Term(self.scale * self.call, (), "call"))


@dataclass(frozen=True)
class CmsisNN:
    """CMSIS-NN on one Cortex-M7 (arm_convolve_s8 & co): q15 im2col + 2×2 MatMul with SMLAD."""

    name: str = "cmsis-nn"
    mm_2x2: float = 21.0       # 16 MACs: 2 weight words widened (SXTB16, ROR), 4 q15 loads, 8 SMLAD
    mm_1x2: float = 10.0       # leftover channel
    mm_2x1: float = 11.0       # odd pixel
    mm_1x1: float = 6.0
    block: float = 16.0
    requant: float = 12.0
    im2col_byte: float = 1.5   # int8 → q15 widening copy
    im2col_pos: float = 6.0
    psum: float = 3.0
    call: float = 200.0
    dw_mac: float = 2.2        # depthwise per MAC (arm_depthwise_conv_s8, channel-vectorized)
    dw_out: float = 10.0
    fc_mac: float = 0.6        # per MAC in arm_fully_connected_s8 (4-way unrolled SMLAD)
    fc_neuron: float = 14.0
    pool_win: float = 1.5
    pool_out: float = 4.0
    add_elem: float = 8.0
    gap_elem: float = 1.0
    other_elem: float = 30.0

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        return per_image(self._terms(nest, cores))

    def _terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        kind = nest.kind
        if kind == "conv":
            F = nest.FY * nest.FX
            pix = (("oy", ident), ("ox", ident))
            odd = (("oy", parity), ("ox", parity))
            t = [
                Term(0.5 * self.mm_2x2, (*pix, ("k", _blk(2)), ("c", _q(F))), "mm2x2"),
                Term(0.5 * self.block, (*pix, ("k", _blk(2))), "block"),
                Term(0.5 * self.mm_1x2, (*pix, ("k", _left(2)), ("c", _q(F))), "mm1x2"),
                Term(self.mm_2x1 - 0.5 * self.mm_2x2, (*odd, ("k", _blk(2)), ("c", _q(F))),
                     "odd2"),
                Term(self.mm_1x1 - 0.5 * self.mm_1x2, (*odd, ("k", _left(2)), ("c", _q(F))),
                     "odd1"),
                Term(self.requant, (*pix, ("k", ident), ("c", on_last)), "requant"),
                Term(self.psum, (*pix, ("k", ident), ("c", not_last)), "psum_store"),
                Term(self.psum, (*pix, ("k", ident), ("c", not_first)), "psum_load"),
                Term(self.call, (), "call"),
            ]
            if F > 1:
                t.append(Term(F, (*pix, ("c", lin(self.im2col_byte, self.im2col_pos))),
                              "im2col"))
            return tuple(t)
        if kind == "dwconv":
            F = nest.FY * nest.FX
            return (Term(self.dw_mac * F + self.dw_out, (("oy", ident), ("ox", ident),
                                                          ("k", ident)), "dw"),
                    Term(self.call, (), "call"))
        if kind == "fc":
            return (Term(self.fc_mac, (("k", ident), ("c", ident)), "fc"),
                    Term(self.fc_neuron, (("k", ident), ("c", on_last)), "fc_neuron"),
                    Term(self.psum, (("k", ident), ("c", not_last)), "psum_store"),
                    Term(self.psum, (("k", ident), ("c", not_first)), "psum_load"),
                    Term(self.call, (), "call"))
        if kind == "pool":
            return (Term(self.pool_win * nest.FY * nest.FX, (("oy", ident), ("ox", ident),
                                                             ("k", ceil4)), "pool_win"),
                    Term(self.pool_out, (("oy", ident), ("ox", ident), ("k", ident)), "pool_out"),
                    Term(self.call, (), "call"))
        if kind == "gap":
            return (Term(self.gap_elem * nest.FY * nest.FX + self.pool_out, (("k", ident),),
                         "gap"), Term(self.call, (), "call"))
        if kind == "add":
            return (Term(self.add_elem, (("oy", ident), ("ox", ident), ("k", ident)), "add"),
                    Term(self.call, (), "call"))
        return (Term(self.other_elem, (("oy", ident), ("ox", ident), ("k", ident)), "other"),
                Term(self.call, (), "call"))


@dataclass(frozen=True)
class SimdDsp:
    """A SIMD DSP sustaining `macs_per_cycle` (seed 002 eq. 5.10: CC_tile = N_MACs / throughput).

    `macs_per_cycle` is the rate with the native accumulator of `native_acc_bits`; a module whose
    accumulators are wider (`acc_bits`, kept equal to `Module.acc_bits` by
    `Module.with_acc_bits` through `for_acc_bits`) emulates them at `emulated_rate` of it on its
    conv / depthwise / dense kinds — seed 002 §3.2: "32-bit accumulators are supported through
    emulation, but will half the platform's multiply-accumulate throughput", i.e. 0.5. Pooling
    and elementwise kinds keep the full rate (their sums are not the weighted accumulators that
    `acc_bits` narrows)."""

    name: str = "simd-dsp"
    macs_per_cycle: float = 32.0
    #: cycles per output/input element for elementwise kinds (pool, add, other)
    elems_per_cycle: float = 32.0
    native_acc_bits: int = 16
    acc_bits: int = 32
    emulated_rate: float = 0.5

    def for_acc_bits(self, bits: int) -> SimdDsp:
        """This model for a module with `bits`-bit accumulators."""
        return replace(self, acc_bits=bits)

    @property
    def mac_rate(self) -> float:
        """MACs per cycle of the weighted kinds at `acc_bits`."""
        if self.acc_bits <= self.native_acc_bits:
            return self.macs_per_cycle
        return self.macs_per_cycle * self.emulated_rate

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        r = 1.0 / self.macs_per_cycle
        w = 1.0 / self.mac_rate
        F = nest.FY * nest.FX
        all4 = (("n", ident), ("oy", ident), ("ox", ident), ("k", ident))
        if nest.kind in ("conv", "fc"):
            return (Term(w * F, (*all4, ("c", ident)), "macs"),)
        if nest.kind == "dwconv":
            return (Term(w * F, all4, "macs"),)
        if nest.kind in ("pool", "gap"):
            return (Term(r * F, all4, "macs"),)
        return (Term(1.0 / self.elems_per_cycle, all4, "elems"),)


@dataclass(frozen=True)
class SubByteScalar:
    """Cycles of tw_sb_conv / tw_sb_maxpool (module docstring: fitted on GVSoC, assumed elsewhere):
    `mac` per multiply-accumulate (per window tap for max pool), `out` per output element."""

    name: str = "portable-subbyte"
    mac: float = 92.5
    out: float = 2332.0
    #: max pool: cycles per window tap and per output (no requantization)
    tap: float = 150.0
    pool_out: float = 100.0

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        f = nest.FY * nest.FX
        outs = (("n", ident), ("oy", ident), ("ox", ident), ("k", ident))
        if nest.kind in ("conv", "fc"):
            return (Term(self.mac * f, (*outs, ("c", ident)), "macs"), Term(self.out, outs, "requant"))
        if nest.kind == "dwconv":
            return (Term(self.mac * f, outs, "macs"), Term(self.out, outs, "requant"))
        if nest.kind == "pool":
            return (Term(self.tap * f + self.pool_out, outs, "taps"),)
        return (Term(1.0, outs, "copy"),)
