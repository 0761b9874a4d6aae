"""The cost model of tilewise's own pulp kernel family (bindings/pulp) on an 8-core RI5CY cluster.

Where PulpNN (kernels.py) prices the PULP-NN library as seed 004 describes it, this model prices
the code tilewise emits: its XpulpV2 kernels (bindings/pulp/c) and the portable kernels the pulp
family keeps for the rest (softmax, logistic, concat, onnx add and pooling). Each term follows a
kernel's loop structure; the coefficients are cycles per iteration of that loop on one core, fitted
on GVSoC measurements of the compute phases (barrier to barrier) of generated layers
(bench/calibrate_pulp.py; the fit and its data in bench/calibration_pulp.json).

Work split (tw_pulp_common.h): every kernel cuts its tile into items and gives each core a
contiguous run of items/P (P cores), so the per-core work is the tile's work over P — a sum of
separable terms as targets/compute.py requires — plus, per tile, what the rounding of items/P and
the call cost (fork-free: the cores are already in the layer's fork; two barriers per tile):
- conv (im2col + 4×2 MatMul): items = output-pixel pairs (× channel groups when pairs < P); per
  pair: the im2col of two receptive fields (one contiguous run per kernel row), then per block of
  4 output channels ⌈F·c/4⌉ MatMul steps (6 p.lw + 8 pv.sdotsp.b = 14 cycles for 32 MACs) and the
  block's set-up; per output the requantization (its cost depends on the mode: `for_key`); with C
  tiled, int32 partial sums loaded and stored;
- 1×1 conv: the same MatMul on the HWC pixels, no im2col;
- built for Arm (`arm`, tw_pulp_matmul_arm.h): each pixel's column (1×1 too) unpacked once to int16
  pairs (im2col_byte per value), then a 2×2 MatMul (mm_step, block: the same shapes, fitted);
- depthwise: items = (channel, output row); per item a ring of FY input rows is refilled
  (byte gathers from HWC), per output FY SIMD steps of a kernel row and the requantization;
  built for Arm (`arm`: tw_pulp_depthwise.c's four-channel path) items = (4-channel group,
  output row), per group a ring of padded rows refilled with (SH·(oy − 1) + FY) rows of
  SX·(ox − 1) + FX unpacked pixels, per output FY·FX taps (a quarter of a 4-channel tap) and the
  requantization;
- dense: items = output neurons, the busiest core takes ⌈k/P⌉ of them (exact, and superadditive);
  per neuron ⌈c/4⌉ SIMD steps and the requantization;
- add / sub (tflite): per output element the folded form's two table reads, add-and-shift and
  clamp (tw_pulp_add_fold_s8: a hardware loop of 39 instructions per 4 elements, 9.75 cycles an
  element); per layer, on its first tile, the 2 × 256 table entries shared by the cores (each
  entry an exact MBQM and a 64-bit multiply-add and shift). The layers addfold.fold cannot prove
  exact (rare: 2% of random scale sets, none of the MLPerf Tiny adds) run tw_pulp_add_s8 instead,
  about 30 cycles an element (bench/calibration_pulp.json before the folded form): priced as the
  folded form — an assumption;
- mul: per output element, TFLite's rescaling (a multiply by a quantized multiplier); onnx add /
  sub run the portable kernel (float32 in software);
- max / average pooling: per output, window × ⌈k/4⌉ SIMD steps; global pooling: per channel,
  the pixels;
- untiled ops (one core, portable C on the L2 tensors): per element and per call; the host
  core's transpose (`transpose_elem`), concatenation (`concat_elem`) and requantization
  (quantize: `quant_elem`, tw_mbqm's 64-bit arithmetic on rv32) per output element, the rest
  (softmax, logistic, reshape ...) `other_elem`.

A host core's module ("cpu": one core computing on the L2 tensors, untiled) runs the same kernels
with their loads from L2 instead of L1 (about 14 cycles more each on GVSoC): `from_l2` gives, per
layer kind, the factor on every term but the requantization (whose cost is arithmetic, not
loads) and the per-tile call; the untiled ops' coefficients were measured from L2 already. HOST holds the factors and
the host ops' coefficients fitted on GVSoC (bench/calibrate_cpu.py, bench/calibration_cpu.json).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..ir.layer import LoopNest
from .compute import Term, ident, on_last

#: entries of each input's add / sub table (tw_pulp_elementwise.h TW_PULP_ADD_VALUES)
ADD_VALUES = 256


def _ceil4(s, first, last):
    return np.ceil(s / 4.0)


def _steps(F: int):
    """⌈F·c / 4⌉: SIMD steps of a reduction of F·c bytes."""
    def f(s, first, last):
        return np.ceil(F * s / 4.0)
    return f


def _lin(a: float, b: float):
    def f(s, first, last):
        return a * s + b
    return f


def _share(P: int):
    """⌈s / P⌉: the most items one core gets of s (tw_pulp_share's balanced runs)."""
    def f(s, first, last):
        return np.ceil(s / P)
    return f


def _not_last(s, first, last):
    return (~np.asarray(last, bool)).astype(np.float64) + 0.0 * s


def _not_first(s, first, last):
    return (~np.asarray(first, bool)).astype(np.float64) + 0.0 * s


def _first(s, first, last):
    return np.asarray(first, bool).astype(np.float64) + 0.0 * s




@dataclass(frozen=True)
class PulpKernels:
    """Cycles per loop iteration of the pulp kernels on one RI5CY core (module docstring)."""

    name: str = "pulp-kernels"
    # conv and 1x1 conv (per pixel pair / per 4-channel block / per output)
    mm_step: float = 7.54        # one MatMul step of 4 channels × 2 pixels, per pixel (14 / 2)
    mm_block: float = 65.1      # per 4-channel block and pixel: pointers, accumulators, stores
    mm_tile: float = 0.5        # per tile: the rounding of pairs/P, in pairs of MatMul work
    im2col_byte: float = 0.0    # per im2col byte (word copies)
    im2col_row: float = 98.6    # per kernel row per pixel (a copy call, padding checks)
    #: requantization per output, by the binding's mode (bindings/pulp/constants.py variants):
    #: TFLite's 32-bit MultiplyByQuantizedMultiplier, shift mode, onnx in software float32
    requant_tflite: float = 20.4
    requant_shift: float = 12.0
    requant_onnx: float = 1049.0
    requant: float = 20.4       # the mode this copy prices (for_key)
    psum: float = 2.36           # per output per partial-sum load or store
    # depthwise
    dw_out: float = 0.0         # per output beyond its kernel-row steps and requantization
    dw_step: float = 0.0        # per kernel row of ≤ 4 taps (p.lw + pv.sdotsp.b + pointers)
    dw_gather: float = 5.82      # per byte refilled into the ring
    dw_item: float = 175.9       # per (channel, row) item
    #: the kernels built for Arm (tw_pulp_isa.h TW_PULP_ARM; module docstring): the depthwise's
    #: four-channel path, the conv's columns unpacked per pixel (1x1 too)
    arm: bool = False
    # dense
    fc_step: float = 2.09        # per SIMD step of 4 inputs of one neuron
    fc_neuron: float = 9.31     # per neuron beyond its requantization
    # elementwise, pooling
    add_elem: float = 9.32      # add / sub per output element (the folded form)
    add_table: float = 55.7     # add / sub per table entry (2 x 256 per layer, shared by the cores)
    add_onnx: float = 1579.0    # onnx add / sub (portable C, float32 in software) per element
    mul_elem: float = 35.0      # mul per output element
    elem: float = 9.32          # the elementwise op this copy prices (for_key)
    table: float = 55.7         # its table entries' cost (for_key; 0 but for tflite add / sub)
    pool_step: float = 12.5      # per window tap per 4 channels
    pool_out: float = 12.8       # per output element
    gap_pixel: float = 11.2      # global pooling: per pixel per channel
    gap_chan: float = 296.0      # global pooling: per channel
    # untiled portable kernels, per element and per call
    other_elem: float = 415.0
    other_call: float = 3804.0
    transpose_elem: float = 415.0  # transpose: per output element
    concat_elem: float = 415.0     # concatenation: per output element
    quant_elem: float = 415.0      # quantize (tflite requantization): per output element
    other: float = 415.0           # the untiled op this copy prices (for_key)
    #: per layer kind, the factor on its terms (but requant and tile) when one core runs them
    #: on the L2 tensors (a host core's module); kinds not listed: 1
    from_l2: tuple[tuple[str, float], ...] = ()
    # every tile: the kernel call inside the tile loop and its two barriers
    tile: float = 1324.0

    def for_key(self, key) -> PulpKernels:
        """The model of one binding: its mode's requantization, its elementwise op's cost."""
        rq = {"onnx": self.requant_onnx, "shift": self.requant_shift}.get(key.mode,
                                                                          self.requant_tflite)
        elem = (self.mul_elem if key.op == "mul" else
                self.add_onnx if key.mode == "onnx" else self.add_elem)
        table = self.add_table if key.op in ("add", "sub") and key.mode != "onnx" else 0.0
        other = {"transpose": self.transpose_elem, "concat": self.concat_elem,
                 "quantize": self.quant_elem}.get(str(key.op), self.other_elem)
        return replace(self, requant=rq, elem=elem, table=table, other=other)

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        t = self._terms(nest, max(cores, 1))
        f = dict(self.from_l2).get(nest.kind, 1.0)
        return tuple(Term(x.coef * (1.0 if x.label in ("requant", "tile") else f),
                          (("n", ident), *x.factors), x.label) for x in t)

    def _terms(self, nest: LoopNest, P: int) -> tuple[Term, ...]:
        kind, F = nest.kind, nest.FY * nest.FX
        pix = (("oy", ident), ("ox", ident))
        tile = Term(self.tile, (), "tile")
        if kind == "conv":
            t = [Term(self.mm_step / P, (*pix, ("k", _ceil4), ("c", _steps(F))), "mm"),
                 Term(self.mm_block / P, (*pix, ("k", _ceil4)), "block"),
                 Term(2 * self.mm_step * self.mm_tile, (("k", _ceil4), ("c", _steps(F))),
                      "mm_tile"),
                 Term(self.requant / P, (*pix, ("k", ident), ("c", on_last)), "requant"),
                 Term(self.psum / P, (*pix, ("k", ident), ("c", _not_last)), "psum_store"),
                 Term(self.psum / P, (*pix, ("k", ident), ("c", _not_first)), "psum_load"),
                 tile]
            if F > 1 or self.arm:
                t.append(Term(self.im2col_byte * F / P, (*pix, ("c", ident)), "im2col"))
            if F > 1:
                t.append(Term(self.im2col_row * nest.FY / P, pix, "im2col_rows"))
            return tuple(t)
        if kind == "dwconv" and self.arm:
            rows = (("k", ident), ("oy", ident))
            return (Term((self.dw_out + F * self.dw_step) / P, (*rows, ("ox", ident)), "dw_out"),
                    Term(self.requant / P, (*rows, ("ox", ident)), "requant"),
                    Term(self.dw_gather / 4 / P,
                         (("k", ident), ("oy", _lin(nest.SY, nest.FY - nest.SY)),
                          ("ox", _lin(nest.SX, nest.FX - nest.SX))), "dw_gather"),
                    Term(self.dw_item / 4 / P, rows, "dw_item"),
                    tile)
        if kind == "dwconv":
            rows = (("k", ident), ("oy", ident))
            return (Term((self.dw_out + nest.FY * self.dw_step) / P, (*rows, ("ox", ident)),
                         "dw_out"),
                    Term(self.requant / P, (*rows, ("ox", ident)), "requant"),
                    Term(self.dw_gather * nest.FY / P, (*rows, ("ox", _lin(nest.SX, nest.FX))),
                         "dw_gather"),
                    Term(self.dw_item / P, rows, "dw_item"),
                    tile)
        if kind == "fc":
            share = ("k", _share(P))
            return (Term(self.fc_step, (share, ("c", _ceil4)), "fc_mac"),
                    Term(self.fc_neuron, (share, ("c", on_last)), "fc_neuron"),
                    Term(self.requant, (share, ("c", on_last)), "requant"),
                    Term(self.psum / P, (("k", ident), ("c", _not_last)), "psum_store"),
                    Term(self.psum / P, (("k", ident), ("c", _not_first)), "psum_load"),
                    tile)
        if kind == "add":
            first = (("k", _first), ("oy", _first), ("ox", _first))
            return (Term(self.elem / P, (*pix, ("k", ident)), "elem"),
                    Term(self.table * np.ceil(2 * ADD_VALUES / P), first, "tables"), tile)
        if kind == "pool":
            return (Term(self.pool_step * F / P, (*pix, ("k", _ceil4)), "pool_win"),
                    Term(self.pool_out / P, (*pix, ("k", ident)), "pool_out"), tile)
        if kind == "gap":
            return (Term(self.gap_pixel * F / P, (("k", ident),), "gap_in"),
                    Term(self.gap_chan / P, (("k", ident),), "gap_chan"), tile)
        return (Term(self.other, (*pix, ("k", ident)), "other"),
                Term(self.other_call, (), "call"))


#: one RI5CY core running the pulp kernels on the L2 tensors (a host core's module, "cpu": module
#: docstring), fitted on GVSoC (bench/calibrate_cpu.py, bench/calibration_cpu.json: every layer of
#: kws_dscnn, ad_autoencoder, the example and four host-op models on the cpu alone; kws_dscnn and
#: ad_autoencoder within 4%, 3×3 convs of a few channels over-predicted by up to 1.6×, 1×1
#: convs 0.9×). Per kind: a load from L2 costs ~14 cycles more than from L1, which weighs most
#: on dense (two loads per 4 MACs) and conv (three per pixel step), least on depthwise (bytes
#: gathered once into an L1 ring); the pulp add is in none of those networks: 1, assumed
HOST = replace(PulpKernels(), name="pulp-kernels-l2",
               from_l2=(("conv", 4.817), ("dwconv", 1.204), ("fc", 9.518), ("gap", 1.333),
                        ("pool", 1.848)),
               transpose_elem=37.64, concat_elem=7.48, quant_elem=189.67)
