"""The cost models of tilewise's own pulp kernel family (bindings/pulp) on an 8-core RI5CY cluster:
`PulpKernels` (its int8 and integer-export kernels) and `SubbyteCost` (its sub-byte conv / dense).

Where PulpNN (bindings/portable/cost.py) prices the PULP-NN library as seed 004 describes it, this model prices
the code tilewise emits: its XpulpV2 kernels (bindings/pulp/c) and the portable kernels the pulp
family keeps for the rest (softmax, logistic, concat, onnx add and pooling). Each term follows a
kernel's loop structure; the coefficients are cycles per iteration of that loop on one core, fitted
on GVSoC measurements of the compute phases (barrier to barrier) of generated layers
(bench/calibrate_pulp.py; the fit and its data in bench/calibration_pulp.json).

Work split (tw_pulp_common.h): every kernel cuts its tile into items and gives each core a
contiguous run of items/P (P cores), so the per-core work is the tile's work over P — a sum of
separable terms as bindings/cost_terms.py requires — plus, per tile, what the rounding of items/P and
the call cost (fork-free: the cores are already in the layer's fork; two barriers per tile):
- conv (im2col + 4×2 MatMul): items = output-pixel pairs (× channel groups when pairs < P); per
  pair: the im2col of two receptive fields (one contiguous run per kernel row), then per block of
  4 output channels ⌈F·c/4⌉ MatMul steps (6 p.lw + 8 pv.sdotsp.b = 14 cycles for 32 MACs) and the
  block's set-up; per output the requantization (its cost depends on the mode: `for_key`); with C
  tiled, int32 partial sums loaded and stored;
- 1×1 conv: the same MatMul on the HWC pixels, no im2col;
- built for Arm (`arm`, tw_pulp_matmul_arm.h): each pixel's column (1×1 too) unpacked once to int16
  pairs (im2col_byte per value), then a 2×2 MatMul (mm_step, block: the same shapes, fitted);
  with the weights widened to int16 at codegen (`widened`, bindings/pulp/widened.py conv_layout,
  one core, the whole reduction): per quad of pixels the columns unpacked (cw_unpack per value),
  per 2-channel block the 2×4 MatMul (cw_step per pixel, block and step of 4 values, the last
  quad's missing pixels included; cw_block per pixel and block), per kernel row of a pixel
  cw_row, the requantization per output as above, and in cycles the flash line fills of weights
  larger than the data cache, read again for every quad (cw_flash per line);
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
  (softmax ...) `other_elem`; the reshape its copy ("Integer exports" below). TFLite's unrolled
  recurrent layers' kernels have their own fit (bench/calibrate_untiled.py): the LOGISTIC / TANH
  lookup (`lut_elem`, `lut_call`), ADD / SUB with a broadcast operand (`bcast_elem`,
  `bcast_call`), tw_transpose's call (`transpose_call`); each such layer is called directly by
  the network's core, so the schedule adds the module's call_overhead_cycles to them, not its
  layer_overhead_cycles (targets/base.py Module.fixed_cycles).

Integer exports (NEMO / QuantLab / Deeploy, ../shared/models/integer_onnx): their kernels are the
portable family's scalar C, not the SIMD kernels above, and each is priced by its own loops
(`scalar`, chosen by `for_key` from the binding key; coefficients fitted on GVSoC cycles and
counted Cortex-M7 instructions of real export layers by bench/calibrate_int.py, data in
bench/calibration_int.json, every kernel's layers there within 25% of their measurement — the
worst the cluster's 16x8 dense layers, 1.19 and 1.24, a few thousand cycles each):
- 16x8 conv / depthwise / dense with a shift or div requantization (keys x16 w8, shift / div:
  tw_s16.c, tiled on the cluster): conv and depthwise split the tile's output pixels over the
  cores (pixels/P, and the rounding's (P − 1)/2P pixel per tile); per output F·c MACs of a
  scalar dot product (`s16_mac`), F kernel taps (`s16_tap`: bounds, the dot product's call; a
  depthwise tap with its one MAC `s16_dw_tap`) and the output (`s16_out`: bias or partial sum,
  the 64-bit requantization, store); dense splits output channels, ⌈k/P⌉ per core; the div
  form adds a division per output (`div64`: tw_div64_clamp — fitted on one layer, the 16x8
  dense of calibrate_int's generated network, since the frontend gives most NEMO divisions an
  exact shift form);
- TFLite's 16x8 layers (`tilewise quantize --bits 16`: int16 activations, int8 weights; keys
  x16 w8, tflite) run the same tw_s16.c conv / depthwise / dense, not the SIMD kernels: the
  structure above with TFLite's requantization per output in place of the shift form (the
  conv / depthwise's int64 MultiplyByQuantizedMultiplier `s16_rq_tflite`, the dense's
  round(double(acc)·scale) `s16_rq_real`); their 16-bit pooling (tw_avgpool_s16 /
  tw_maxpool_s16, any x16 pool key) per window tap and per output element (`s16_pool_tap`,
  `s16_pool_out`), output pixels over the cores as the conv's (a layer with no more output
  pixels than cores, a global pooling, exactly one pixel per tile on the busiest core — the 16x8
  conv and depthwise too); their add / sub (tw_add_s16: TFLite's rescalings per element, no
  table) per element (`s16_add_elem`). Fitted by bench/calibrate_int.py on MLPerf Tiny's KWS and
  ResNet-8 quantized to 16x8 (GVSoC cycles on pulp-open's cluster and host core, counted
  Cortex-M7 instructions); mul_s16 (tw_mul_value) is in none of them and keeps the int8 mul's
  per-element cost, and the softmax_s16 the untiled ops' — assumptions;
- the portable 8-bit conv / depthwise / dense in div mode (keys x8 w8, div: NEMO's divisions
  that have no int32 shift form, frontend/shift_fit.py; the pulp kernels have no div variant, so
  the cluster runs tw_conv2d_s8's im2col and 4x2 MatMul in C): the 16x8 structure above with
  their own per-MAC cycles (`s8_mac`);
- the add by two tables (add_table_s8: op add, no mode, tiled): per output element two table
  reads, add, shift, clamp (`tadd_elem`), per table entry copied into L1 on the layer's first
  tile (`tadd_entry`, 2 × 256 shared by the cores);
- tw_int.h on the host core (int_ops.py's bindings, priced by `for_int_ops`'s copy: a conv
  key of theirs can equal a 16x8 kernel's): conv / depthwise / dense per MAC (`int_mac`; int32
  inputs accumulate in int64, `int_mac64`), per tap and per output (requantization, store;
  `div64` more in div form), one call; requant, add / sub, mul and hardswish per element
  (tw_int_binary's typed loops `int_add_elem` for add / sub whose key's widths allow them, its
  generic walk `int_bin_elem` otherwise; the second operand's width is not in the key); Deeploy's
  iSoftmax, iRMSNorm, iLayerNorm, iGELU and ITAMax per element (`int_smx_elem`, `int_rms_elem`,
  `int_ln_elem`, `int_gelu_elem`, `int_ita_elem`: fitted on the host cores by bench/calibrate_host_rows.py
  (HOST, stm32h7), the defaults assumed from the hardswish's per-read cost and div64; their
  per-row square root / sum left in the element); TFLite's integer LSTM
  (tw_lstm.h, bindings/portable/lstm.py) per MAC of its gate products (`lstm_mac`, 4·H·(I + H)
  per step) and per cell and step (`lstm_cell`: three sigmoids, two tanh, the cell update, the
  rescale of h and its copy), fitted on GVSoC (bench/calibrate_lstm.py) — a cluster target's host
  core's kernel: the cluster and stm32h7 run lstm_cluster_s8 (lstm_cost.py);
  matmul per MAC (a's last dimension per output) and per output; reduce per input element
  (the input's batch taken as the output's) and per output; slice is tw_transpose
  (`transpose_elem`, `transpose_row`);
- reshape: a view of its input's bytes in the memory plan (memory/network.py): no work of its own.
All of them but the 16x8 kernels (TFLite's, pooling and add included) and the table add run on
one core from L2 wherever they run, so one value serves the cluster's module and the host core's;
the 16x8 kernels and the table add have their own values on a host core (HOST). Their terms are not scaled by `from_l2`.

A host core's module ("cpu": one core computing on the L2 tensors, untiled) runs the same kernels
with their loads from L2 instead of L1 (about 14 cycles more each on GVSoC): `from_l2` gives, per
layer kind, the factor on every term but the requantization (whose cost is arithmetic, not
loads) and the per-tile call; the untiled ops' coefficients were measured from L2 already. HOST (targets/pulp_open.py,
pulp-open's host core) holds the factors and the host ops' coefficients fitted on GVSoC
(bench/calibrate_cpu.py, bench/calibration_cpu.json).

The sub-byte conv / dense (c/tw_pulp_subbyte.h, bindings/pulp/subbyte.py) has its own structure and
fit, `SubbyteCost` (its class docstring); its requantization beyond shift32's is the module's
PulpKernels per-mode figures (`SubbyteCost.priced_by`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...ir.layer import LoopNest
from ...ir.operands import REDUCING
from ..cost_terms import Term, ceil4, ident, lin, not_first, not_last, on_first, on_last, tile_cycles

#: entries of each input's add / sub table (tw_pulp_elementwise.h TW_PULP_ADD_VALUES)
ADD_VALUES = 256
#: the data cache the Arm core reads its flash weights through (the STM32H743's 16 kB L1
#: D-cache, platforms/m7_timing.py DCACHE_BYTES): the widened conv's weights above it are read
#: from flash again for every quad of pixels (PulpKernels.cw_flash)
WEIGHT_CACHE_BYTES = 16 * 1024




def _steps(F: int):
    """⌈F·c / 4⌉: SIMD steps of a reduction of F·c bytes."""
    def f(s, first, last):
        return np.ceil(F * s / 4.0)
    return f




def _share(P: int):
    """⌈s / P⌉: the most items one core gets of s (tw_pulp_share's balanced runs)."""
    def f(s, first, last):
        return np.ceil(s / P)
    return f










def _pixel_groups(nest: LoopNest, P: int, rest: tuple) -> tuple[tuple[float, tuple], ...]:
    """(weight, factors) of the busiest core's output pixels when a tile's oy·ox pixels are
    split over P cores (tw_core_range), times `rest`: ⌈pixels/P⌉ is not a product of
    per-dimension factors, so pixels/P and, per tile, the rounding's (P − 1)/2P of a pixel on
    average — but exactly one pixel per tile when the layer has no more pixels than cores (every
    tile then has at most P: a global pooling's single output pixel, one core busy)."""
    if nest.OY * nest.OX <= P:
        return ((1.0, rest),)
    return ((1.0 / P, (("oy", ident), ("ox", ident), *rest)), ((P - 1) / (2.0 * P), rest))


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
    #: TFLite's 32-bit MultiplyByQuantizedMultiplier, shift mode, onnx's float32 product in
    #: integers (tw_pulp_rq_onnx, issue 27; 1049 when it was software float32): fitted alone on
    #: GVSoC pulp-open, 8 cores, on the onnx-mode conv / depthwise / dense layers of the example
    #: and of kws_dscnn and ic_resnet8 quantized to QDQ ONNX (bench/calibrate_onnx_requant.py,
    #: bench/calibration_onnx_requant.json: 42.4; 41.7 on 1 core; per layer 24-69 but for the
    #: tiny dense layers, the depthwise ~28, the convs ~44)
    requant_tflite: float = 20.4
    requant_shift: float = 12.0
    requant_onnx: float = 42.4
    #: the onnx24 variant (tw_pulp_rq_onnx24: no range check, no 64-bit path; the *_onnx24
    #: bindings, constants.onnx24_fits), priced through `onnx24`: per channel the linear form
    #: (one mulh, bindings/pulp/onnx_linear.py) where it is exact — 91% of the example's
    #: channels, 95% of kws_dscnn's, 89% of ic_resnet8's (QDQ) — else the exact form's bit scan
    #: and carry; fitted alone like requant_onnx on the onnx24 layers of those three, GVSoC
    #: pulp-open (bench/calibrate_onnx_requant.py, bench/calibration_onnx_requant.json: 13.77 on
    #: 8 cores, 12.98 on 1; 22.8 with the exact form on every channel; tflite's is 20.4)
    requant_onnx24: float = 13.8
    #: onnx's requantization as onnxruntime's float32 operations on an Arm core's FPU
    #: (tw_pulp_rq_onnx_fpu: vcvt, vmul, vcvtr; the onnx_fpu variant), per output; None: no FPU.
    #: The weighted kernels (conv, depthwise, dense) take that form where it is the cheaper
    #: (onnx_on_fpu; bindings/pulp/__init__.py)
    requant_onnx_fpu: float | None = None
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
    #: the dense with int16 weights built for Arm (bindings/pulp/widened.py; 0: no such binding):
    #: per step of 4 inputs of one neuron and per neuron with its tflite requantization (four
    #: outputs at once), in place of fc_step, fc_neuron and requant where `widened` (the
    #: binding's copy of the model; another mode's requantization adds its difference)
    fcw_step: float = 0.0
    fcw_neuron: float = 0.0
    #: the conv and 1x1 conv with int16 weights built for Arm (widened.py conv_layout; 0: no such
    #: binding), in place of mm_step, mm_block, im2col_byte where `widened`: per step of 4
    #: reduction values of one output pixel and block of 2 output channels (the 2x4 MatMul's
    #: loop), per pixel and 2-channel block (the block's bias, words, call and stores), per
    #: reduction value of a pixel (its unpacking into the four-pixel columns), per kernel row of
    #: a pixel (its unpacking call, in place or from the padded field)
    cw_step: float = 0.0
    cw_block: float = 0.0
    cw_unpack: float = 0.0
    cw_row: float = 0.0
    #: per 32-byte line of the widened conv's weights read from flash again for each quad of
    #: pixels when they exceed the data cache (WEIGHT_CACHE_BYTES): the cycles of a line fill
    #: (0 in instructions)
    cw_flash: float = 0.0
    #: the widened bindings' copy of the model (the dense's fcw_*, the conv's cw_*)
    widened: bool = False
    # elementwise, pooling
    add_elem: float = 9.32      # add / sub per output element (the folded form)
    add_table: float = 55.7     # add / sub per table entry (2 x 256 per layer, shared by the cores)
    #: onnx add per element: tw_pulp_add_onnx_exact_s8 (QLinearAdd in integers, issue 27; 1579
    #: in soft-float), GVSoC 8 cores, the adds of the example and ic_resnet8 as QDQ
    #: (bench/calibrate_onnx_requant.py, bench/calibration_onnx_requant.json: 81.1)
    add_onnx: float = 81.1
    #: the folded onnx add (binding add_onnx_fold_s8, simple.onnx_fold): per element
    #: add_onnx_fold (tw_pulp_add_fold_s8, the tflite folded kernel: fitted on the adds of the
    #: example and ic_resnet8 with the copy's term below, bench/calibrate_onnx_requant.py:
    #: 10.30), per table entry copied into L1 on the layer's first tile add_onnx_copy (2 × 256
    #: shared by the cores; assumed, not fitted: it is one term per layer); priced through
    #: `onnx_fold` (add_onnx_table is 0 but in that copy)
    add_onnx_fold: float = 10.3
    add_onnx_copy: float = 8.0
    add_onnx_table: float = 0.0
    mul_elem: float = 35.0      # mul per output element
    elem: float = 9.32          # the elementwise op this copy prices (for_key)
    table: float = 55.7         # its table entries' cost (for_key; 0 but for tflite add / sub)
    pool_step: float = 12.5      # per window tap per 4 channels
    pool_out: float = 12.8       # per output element
    gap_pixel: float = 11.2      # global pooling: per pixel per channel
    gap_chan: float = 296.0      # global pooling: per channel
    #: the onnx-mode global average pool (tw_pulp_global_avgpool_rq_s8_onnx: one requantization
    #: per channel, no division), fitted on GVSoC pulp-open's cluster on the onnx GAP of the
    #: example, kws_dscnn and ic_resnet8 (QDQ) on 1 and 8 cores (1.25-1.28 per pixel and
    #: channel, 61-69 per channel, with the tile term; the tflite values above priced them 3-7×
    #: their measured cycles)
    gap_pixel_onnx: float = 1.26
    gap_chan_onnx: float = 65.0
    # untiled portable kernels, per element and per call
    other_elem: float = 415.0
    other_call: float = 3804.0
    #: the portable kernels TFLite's unrolled recurrent layers run whole, one core on the L2
    #: tensors, each layer called directly (the module's call_overhead_cycles beside): the 256-entry
    #: lookup of LOGISTIC / TANH (tw_lut_s8) per element and per call; ADD / SUB with a broadcast
    #: operand (tw_add_s8 / tw_sub_s8 per pixel: TFLite's three 64-bit rescalings per element)
    #: per element and per call; tw_transpose's call (SLICE / SPLIT / UNPACK and TRANSPOSE on a
    #: host core; its elements and rows `transpose_elem`, `transpose_row`). Fitted on GVSoC
    #: pulp-open by bench/calibrate_untiled.py (bench/calibration_untiled.json: 16-8192 elements
    #: and the TensorFlow GRU's layers, lookups and subs within 6%, slices and transposes within
    #: 16% but a group's first slice, 0.70-0.86: tw_transpose's code fetched again after the
    #: other kernels)
    lut_elem: float = 52.18
    lut_call: float = 15.8
    bcast_elem: float = 422.26
    bcast_call: float = 808.7
    transpose_call: float = 254.01
    transpose_elem: float = 415.0  # transpose: per output element
    #: tw_transpose (transpose, the integer exports' slice): per row of the innermost output
    #: dimension (N·OY·OX of the output's view), its odometer step; 0 where transpose_elem's fit
    #: took it in (the RI5CY host core's)
    transpose_row: float = 0.0
    concat_elem: float = 415.0     # concatenation: per output element
    quant_elem: float = 415.0      # quantize (tflite requantization): per output element
    other: float = 415.0           # the untiled op this copy prices (for_key)
    other_row: float = 0.0         # its cost per row of the innermost output dimension (for_key)
    #: per layer kind, the factor on its terms (but requant and tile) when one core runs them
    #: on the L2 tensors (a host core's module); kinds not listed: 1; "conv1x1", where listed,
    #: for the 1x1 convs in place of "conv"
    from_l2: tuple[tuple[str, float], ...] = ()
    # every tile: the kernel call inside the tile loop and its two barriers
    tile: float = 1324.0
    # --- the integer exports' kernels (module docstring "Integer exports"), scalar C ---------
    #: 16x8 conv / depthwise / dense with a shift or div requantization (tw_s16.c), on one core
    #: from L1: per MAC of the dot product, per conv kernel tap (bounds, the dot product's call),
    #: per depthwise tap (its one MAC included), per output and C tile (bias or partial sum,
    #: 64-bit shift requantization, store)
    s16_mac: float = 12.569
    s16_tap: float = 40.452
    s16_dw_tap: float = 45.078
    s16_out: float = 187.646
    #: TFLite's 16x8 layers (`tilewise quantize --bits 16`: mode tflite) run the same tw_s16.c
    #: kernels; per output beyond s16_out, their requantization in place of the shift form: the
    #: conv / depthwise's int64 MultiplyByQuantizedMultiplier (tw_mbqm64, `s16_rq_tflite`), the
    #: dense's round(double(acc)·scale) (tw_real_round, `s16_rq_real`: software double on RI5CY)
    s16_rq_tflite: float = 29.99
    s16_rq_real: float = 2159.93
    #: tw_avgpool_s16 / tw_maxpool_s16 (16-bit pooling, scalar): per window tap of one channel, per
    #: output element (the clipped window, the rounded division, clamp, store); output pixels
    #: split over the cores as the 16x8 conv's. No cluster row in bench/calibration_int.json (the
    #: partition gives both models' global poolings to the host core): from the one cluster
    #: measurement, KWS 16x8's 25x5 average pooling of 64 channels on GVSoC at 2da4f06's
    #: partition (110,855 compute cycles on one core: 13.0 per tap and 40 per output, predicted
    #: 0.97), the per-output part assumed
    s16_pool_tap: float = 13.0
    s16_pool_out: float = 40.0
    #: tw_add_s16 / tw_sub_s16: per output element (tw_add_value: both operands rescaled, the
    #: sum's rescaling, clamp), elements split over the cores
    s16_add_elem: float = 142.483
    #: the portable 8-bit conv / dense in div mode (tw_conv2d_s8's im2col and 4x2 MatMul in C,
    #: the cluster's when the pulp kernels have no div variant), priced as the 16x8 structure
    #: with its own per-MAC cycles: fitted on its 4 layers of SmartAgri-net and eegnetDW alone
    #: (predicted / measured 1.02 conv, 0.98 dense; calibrate_int's joint fit, 6.5, gives 1.10)
    s8_mac: float = 5.8
    #: per division of the div requantization beyond the shift form (tw_div64_clamp: comparisons
    #: with the clamp, a 32-bit division inside it), in every kernel that has one (16x8, tw_int)
    div64: float = 114.0
    #: the add by two tables (tw_add_table_s8): per output element, per table entry copied into
    #: L1 on the layer's first tile (2 × 256, shared by the cores)
    tadd_elem: float = 25.299
    tadd_entry: float = 7.198
    #: tw_int.h on the host core (one core, the L2 tensors): conv / depthwise / dense per MAC
    #: (int32 accumulator; `int_mac64` for int32 inputs, whose accumulator is int64), per kernel
    #: tap, per output (requantization, store)
    int_mac: float = 39.41
    int_mac64: float = 49.587
    int_tap: float = 30.521
    int_out: float = 230.694
    #: per output element: requant (tw_int_requant), tw_int_binary's typed loops (add / sub of
    #: 8/16-bit tensors) and its generic walk (int64 loads and stores: mul, other widths),
    #: hardswish; matmul per MAC and per output; reduce per input element and per output
    int_rq_elem: float = 91.305
    int_add_elem: float = 69.568
    int_bin_elem: float = 120.756
    int_hsw_elem: float = 67.244
    int_mm_mac: float = 39.593
    int_mm_out: float = 13.17
    int_red_in: float = 58.278
    int_red_out: float = 70.766
    #: Deeploy's iSoftmax and iRMSNorm (tw_int_softmax, tw_int_rms_norm) per element: assumed,
    #: not fitted — the softmax reads each element three times (max, Σe, output; two
    #: exponentials of about a hardswish's work each) and divides once in 64 bits; the norm
    #: reads it twice (Σx², output) and divides once — int_hsw_elem per read plus div64
    int_smx_elem: float = 316.0
    int_rms_elem: float = 248.0
    #: Deeploy's iLayerNorm and iGELU (tw_int_layer_norm, tw_int_gelu) per element: assumed the
    #: same way — the layer norm reads each element three times (Σx, Σd², output) and divides
    #: once in 64 bits; the GELU reads it once, a hardswish's work
    int_ln_elem: float = 316.0
    int_gelu_elem: float = 67.0
    #: Deeploy's ITAMax (tw_int_ita_max) per element: assumed — three reads (max, Σ, output) of
    #: a hardswish's work each, its one division per row left in the element
    int_ita_elem: float = 202.0
    #: LiteRT's integer SVDF (tw_svdf_s8, one core): per feature MAC (F·C), per time-weight MAC
    #: (F·M, the state's shift included) and per filter (its requantization into the state, the
    #: rank reduction and output requantization shared out), one call per layer (other_call);
    #: fitted by bench/calibrate_svdf.py on pulp-open's host core (GVSoC, the cluster's core 0
    #: on L2: every operand load an L2 access), within 2% of its six geometries; only the
    #: host modules have the SVDF binding
    svdf_fmac: float = 39.03
    svdf_tmac: float = 101.376
    svdf_filter: float = 148.824
    #: TFLite's integer LSTM (tw_lstm_gates / tw_lstm_update): per MAC of the gate products and
    #: per cell and step (module docstring), fitted by bench/calibrate_lstm.py on pulp-open's host
    #: core (GVSoC: cluster core 0, the weights and the step's input copied into L1; the target
    #: with lstm_cluster_s8 left out) over four LSTM layers of 104..168 MACs per cell and step,
    #: each within 8.0%
    lstm_mac: float = 12.028
    lstm_cell: float = 2412.2
    #: what the binding runs (for_key): "" the structures above the integer exports', "s16" a
    #: 16x8 kernel, "int" a tw_int conv / depthwise / dense, "matmul", "reduce", "elem" the
    #: other tw_int.h kernels (per element, one call per layer)
    scalar: str = ""
    mac: float = 20.0           # the tw_int conv's MAC this copy prices (int_mac / int_mac64)
    rq_div: float = 0.0         # div64 when the binding's requantization is the div form
    #: a tw_int matmul's requantization of each sum (for_key: int_rq_elem when its output has
    #: fewer than 32 bits, so that a requantization was fused into it; its div form, which the
    #: key does not tell, priced as the shift form — an assumption)
    mm_rq: float = 0.0
    #: the copy of the model that int_ops.py's bindings (tw_int.h) are priced by (`for_int_ops`)
    int_ops: bool = False
    #: the copy that prices a binding running tw_lut_s8 whatever its op (`lookup`: the portable
    #: add / sub / mul by a constant of one value)
    table_lookup: bool = False

    def lookup(self) -> PulpKernels:
        """The copy that prices a 256-entry lookup (tw_lut_s8: `lut_elem`, `lut_call`) for any
        op: the portable family's add / sub / mul by a constant of one value."""
        return replace(self, table_lookup=True)

    def for_int_ops(self) -> PulpKernels:
        """The copy that prices the tw_int.h kernels (bindings/portable/int_ops.py): their keys
        can equal a 16x8 kernel's (x16 w8, shift / div), their C is not the same."""
        return replace(self, int_ops=True)

    @property
    def onnx_on_fpu(self) -> bool:
        """The weighted kernels built for Arm requantize onnx mode on the FPU (onnx_fpu): the core
        has one and the model prices that form below the integer one."""
        return self.requant_onnx_fpu is not None and self.requant_onnx_fpu < self.requant_onnx

    def onnx24(self) -> PulpKernels:
        """The copy that prices the onnx24 bindings: their onnx requantization is requant_onnx24 (never the FPU's)."""
        return replace(self, requant_onnx=self.requant_onnx24, requant_onnx_fpu=None)

    def onnx_fold(self) -> PulpKernels:
        """The copy that prices the folded onnx add: add_onnx_fold per element, add_onnx_copy
        per table entry."""
        return replace(self, add_onnx=self.add_onnx_fold, add_onnx_table=self.add_onnx_copy)

    def for_key(self, key) -> PulpKernels:
        """The model of one binding: its mode's requantization, its elementwise op's cost, and
        for the integer exports' kernels the structure they run (`scalar`)."""
        rq = {"onnx": self.requant_onnx, "shift": self.requant_shift}.get(key.mode,
                                                                          self.requant_tflite)
        if key.mode == "onnx" and self.arm and self.onnx_on_fpu and \
                str(key.op) in ("conv2d", "depthwise", "fully_connected"):
            rq = self.requant_onnx_fpu
        elem = (self.mul_elem if key.op == "mul" else
                self.add_onnx if key.mode == "onnx" else self.add_elem)
        table = ((self.add_onnx_table if key.mode == "onnx" else self.add_table)
                 if key.op in ("add", "sub") else 0.0)
        other = {"transpose": self.transpose_elem, "concat": self.concat_elem,
                 "quantize": self.quant_elem}.get(str(key.op), self.other_elem)
        row = self.transpose_row if str(key.op) == "transpose" else 0.0
        call = self.other_call
        if self.table_lookup or (str(key.op) in ("logistic", "tanh") and key.mode == "tflite"
                                 and key.precision.x == 8):
            other, call = self.lut_elem, self.lut_call
        elif (str(key.op) in ("add", "sub") and key.mode == "tflite" and key.nest_kind == "other"
              and key.precision.x == 8):
            other, call = self.bcast_elem, self.bcast_call
        elif str(key.op) == "transpose":
            call = self.transpose_call
        out = replace(self, requant=rq, elem=elem, table=table, other=other, other_row=row,
                      other_call=call)
        if key.mode == "onnx" and key.nest_kind == "gap":
            out = replace(out, gap_pixel=self.gap_pixel_onnx, gap_chan=self.gap_chan_onnx)
        return out._for_int_key(key)

    def _for_int_key(self, key) -> PulpKernels:
        """The integer exports' kernels, told apart by their keys (module docstring)."""
        op, kind, p = str(key.op), key.nest_kind, key.precision
        if op == "svdf":
            return replace(self, scalar="svdf")
        rq_div = self.div64 if key.mode == "div" else 0.0
        weighted = kind in ("conv", "dwconv", "fc") and key.mode in ("shift", "div") and p.w == 8
        if self.int_ops:
            if weighted:
                return replace(self, scalar="int", rq_div=rq_div,
                               mac=self.int_mac64 if p.x == 32 else self.int_mac)
            if op in ("matmul", "reduce"):
                # a matmul into fewer than 32 bits requantizes each sum as it is formed
                # (passes/fuse_matmul.py; tw_int_matmul's shift form: tw_int_requant's per element)
                return replace(self, scalar=op, mm_rq=self.int_rq_elem if op == "matmul" and p.y < 32 else 0.0)
            # tw_int_binary's typed loops take 8/16-bit operands into an 8/16-bit output; the
            # key says the first operand's width and the output's, not the second's (a constant
            # operand is an int32 array): add / sub are taken as typed where those allow it, mul
            # (NEMO's scale by a constant) as the generic walk
            typed = (p.x, p.y) in ((8, 8), (8, 16), (16, 16))
            add = self.int_add_elem if typed else self.int_bin_elem
            per = {"requant": self.int_rq_elem + rq_div, "add": add, "sub": add,
                   "mul": self.int_bin_elem,
                   "hardswish": self.int_hsw_elem, "slice": self.transpose_elem,
                   "int_softmax": self.int_smx_elem, "rms_norm": self.int_rms_elem,
                   "layer_norm": self.int_ln_elem, "int_gelu": self.int_gelu_elem, "ita_max": self.int_ita_elem}
            if op == "lstm":
                return replace(self, scalar="lstm")
            row = self.transpose_row if op == "slice" else 0.0
            call = self.transpose_call if op == "slice" else self.other_call
            return (replace(self, scalar="elem", other=per[op], other_row=row, other_call=call)
                    if op in per else self)
        if weighted and p.x == 16:
            return replace(self, scalar="s16", rq_div=rq_div)
        if weighted and key.mode == "div":
            # the portable 8-bit kernels the cluster runs in div mode (the pulp kernels have no
            # div variant): scalar C of the 16x8 kernels' structure, its own MAC cost
            return replace(self, scalar="s16", rq_div=rq_div, s16_mac=self.s8_mac)
        if key.mode == "tflite" and p.x == 16 and kind in ("conv", "dwconv", "fc") and p.w == 8:
            # TFLite's 16x8 layers: the kernels above, TFLite's requantization (module docstring)
            return replace(self, scalar="s16",
                           rq_div=self.s16_rq_real if kind == "fc" else self.s16_rq_tflite)
        if p.x == 16 and kind == "pool":
            return replace(self, scalar="pool16")
        if key.mode == "tflite" and p.x == 16 and kind == "add" and op in ("add", "sub"):
            return replace(self, scalar="add16")
        if op == "add" and kind == "add" and key.mode is None:
            return replace(self, elem=self.tadd_elem, table=self.tadd_entry)
        if op == "reshape":
            # a view: the memory plan gives its output its input's bytes (memory/network.py), so its
            # layer function copies nothing — 113-190 cycles on GVSoC, 39-42 Cortex-M7 instructions
            # (ICCT's 20 reshapes), within the module's layer_overhead_cycles
            return replace(self, other=0.0, other_row=0.0, other_call=0.0)
        return self

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        t = self._terms(nest, max(cores, 1))
        by_kind = dict(self.from_l2)
        # a 1x1 conv reads its input from where it is in the MatMul loop (no im2col copy to
        # L1): "conv1x1" where it has a factor of its own
        one = nest.kind == "conv" and nest.FY * nest.FX == 1 and "conv1x1" in by_kind
        f = by_kind["conv1x1"] if one else by_kind.get(nest.kind, 1.0)
        return tuple(Term(x.coef * (1.0 if x.label in _AS_FITTED else f),
                          (("n", ident), *x.factors), x.label) for x in t)

    def _terms(self, nest: LoopNest, P: int) -> tuple[Term, ...]:
        if self.scalar:
            return self._scalar_terms(nest, P)
        kind, F = nest.kind, nest.FY * nest.FX
        pix = (("oy", ident), ("ox", ident))
        tile = Term(self.tile, (), "tile")
        if kind == "conv" and self.widened:
            # the widened conv (one core, the whole reduction: tw_pulp_conv.c conv_w16); the
            # last quad's missing pixels computed too: (−OY·OX) mod 4 pixels of MatMul a tile
            # (exact for the untiled layer, an estimate for a chain's row bands)
            waste = -(nest.OY * nest.OX) % 4
            blocks = (("k", _share(2)), ("c", _steps(F)))
            # weights above the cache (with the per-channel words, 20 bytes a channel: both
            # are read from flash) are read again for every quad: per pixel a quarter of their
            # 32-byte lines (2 bytes a weight)
            thrash = nest.K * (2 * F * nest.C + 20) > WEIGHT_CACHE_BYTES
            return (Term(self.cw_step, (*pix, *blocks), "mm"),
                    Term(self.cw_flash * thrash * 2 * F / (4 * 32),
                         (*pix, ("k", ident), ("c", ident)), "flash"),
                    Term(self.cw_step * waste, blocks, "mm_tile"),
                    Term(self.cw_block, (*pix, ("k", _share(2))), "block"),
                    Term(self.cw_unpack * F, (*pix, ("c", ident)), "im2col"),
                    Term(self.cw_row * nest.FY, pix, "im2col_rows"),
                    Term(self.requant, (*pix, ("k", ident)), "requant"), tile)
        if kind == "conv":
            t = [Term(self.mm_step / P, (*pix, ("k", ceil4), ("c", _steps(F))), "mm"),
                 Term(self.mm_block / P, (*pix, ("k", ceil4)), "block"),
                 Term(2 * self.mm_step * self.mm_tile, (("k", ceil4), ("c", _steps(F))),
                      "mm_tile"),
                 Term(self.requant / P, (*pix, ("k", ident), ("c", on_last)), "requant"),
                 Term(self.psum / P, (*pix, ("k", ident), ("c", not_last)), "psum_store"),
                 Term(self.psum / P, (*pix, ("k", ident), ("c", not_first)), "psum_load"),
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
                         (("k", ident), ("oy", lin(nest.SY, nest.FY - nest.SY)),
                          ("ox", lin(nest.SX, nest.FX - nest.SX))), "dw_gather"),
                    Term(self.dw_item / 4 / P, rows, "dw_item"),
                    tile)
        if kind == "dwconv":
            rows = (("k", ident), ("oy", ident))
            return (Term((self.dw_out + nest.FY * self.dw_step) / P, (*rows, ("ox", ident)),
                         "dw_out"),
                    Term(self.requant / P, (*rows, ("ox", ident)), "requant"),
                    Term(self.dw_gather * nest.FY / P, (*rows, ("ox", lin(nest.SX, nest.FX))),
                         "dw_gather"),
                    Term(self.dw_item / P, rows, "dw_item"),
                    tile)
        if kind == "fc":
            share = ("k", _share(P))
            # the widened dense (widened.py) requantizes four outputs at once (tw_pulp_rq4): its
            # fcw_neuron holds the tflite requantization, other modes add their difference
            step, neuron, rq = ((self.fcw_step, self.fcw_neuron, self.requant - self.requant_tflite)
                                if self.widened else (self.fc_step, self.fc_neuron, self.requant))
            return (Term(step, (share, ("c", ceil4)), "fc_mac"),
                    Term(neuron, (share, ("c", on_last)), "fc_neuron"),
                    Term(rq, (share, ("c", on_last)), "requant"),
                    Term(self.psum / P, (("k", ident), ("c", not_last)), "psum_store"),
                    Term(self.psum / P, (("k", ident), ("c", not_first)), "psum_load"),
                    tile)
        if kind == "add":
            first = (("k", on_first), ("oy", on_first), ("ox", on_first))
            return (Term(self.elem / P, (*pix, ("k", ident)), "elem"),
                    Term(self.table * np.ceil(2 * ADD_VALUES / P), first, "tables"), tile)
        if kind == "pool":
            return (Term(self.pool_step * F / P, (*pix, ("k", ceil4)), "pool_win"),
                    Term(self.pool_out / P, (*pix, ("k", ident)), "pool_out"), tile)
        if kind == "gap":
            return (Term(self.gap_pixel * F / P, (("k", ident),), "gap_in"),
                    Term(self.gap_chan / P, (("k", ident),), "gap_chan"), tile)
        return (Term(self.other, (*pix, ("k", ident)), "other"),
                Term(self.other_row, pix, "other_row"),
                Term(self.other_call, (), "call"))

    def _s16_terms(self, nest: LoopNest, P: int) -> tuple[Term, ...]:
        """tw_conv2d_s16 / tw_depthwise_s16 split the tile's output pixels over the cores: the
        busiest core takes ⌈pixels/P⌉, priced as pixels/P and, per tile, the rounding's
        (P − 1)/2P of a pixel on average (⌈oy·ox/P⌉ is not a product of per-dimension
        factors); tw_fully_connected_s16 splits the output channels, ⌈k/P⌉ on the busiest core.
        Per output: F·c MACs and F taps (depthwise: F taps of one MAC), the output's own work,
        and the div form's division after the last C tile."""
        kind, F = nest.kind, nest.FY * nest.FX
        if kind == "fc":
            groups: tuple[tuple[float, tuple], ...] = ((1.0, (("k", _share(P)),)),)
        else:
            groups = _pixel_groups(nest, P, (("k", ident),))
        t = [Term(self.tile, (), "tile")]
        for w, per in groups:
            t += [Term(w * self.s16_out, per, "s16_out"),
                  Term(w * self.rq_div, (*per, ("c", on_last)) if kind != "dwconv" else per,
                       "s16_div")]
            if kind == "dwconv":
                t.append(Term(w * self.s16_dw_tap * F, per, "s16_dw_tap"))
            else:
                t += [Term(w * self.s16_mac * F, (*per, ("c", ident)), "s16_mac"),
                      Term(w * self.s16_tap * F, per, "s16_tap")]
        return tuple(t)

    def _pool16_terms(self, nest: LoopNest, P: int) -> tuple[Term, ...]:
        """tw_avgpool_s16 / tw_maxpool_s16: output pixels over the cores (as tw_conv2d_s16), per
        output element its FY·FX window taps (the clipped window's, taken as whole) and the
        output's own work."""
        F = nest.FY * nest.FX
        t = [Term(self.tile, (), "tile")]
        for w, per in _pixel_groups(nest, P, (("k", ident),)):
            t += [Term(w * self.s16_pool_tap * F, per, "s16_pool_tap"),
                  Term(w * self.s16_pool_out, per, "s16_pool_out")]
        return tuple(t)

    def _scalar_terms(self, nest: LoopNest, P: int) -> tuple[Term, ...]:
        """The integer exports' kernels (`scalar`, module docstring "Integer exports")."""
        if self.scalar == "s16":
            return self._s16_terms(nest, P)
        if self.scalar == "pool16":
            return self._pool16_terms(nest, P)
        if self.scalar == "add16":   # tw_add_s16 / tw_sub_s16: the tile's elements over the cores
            return (Term(self.s16_add_elem / P, (("oy", ident), ("ox", ident), ("k", ident)),
                         "s16_add"), Term(self.tile, (), "tile"))
        kind, F = nest.kind, nest.FY * nest.FX
        outs = (("oy", ident), ("ox", ident), ("k", ident))
        # one call per layer (terms() multiplies every term by n: these run whole, n = N)
        call = Term(self.other_call / nest.N, (), "call")
        if self.scalar == "svdf":   # K units of FY = rank filters, C features, FX = memory steps
            return (Term(self.svdf_fmac * nest.FY * nest.C, (("k", ident),), "svdf_fmac"),
                    Term(self.svdf_tmac * nest.FY * nest.FX, (("k", ident),), "svdf_tmac"),
                    Term(self.svdf_filter * nest.FY, (("k", ident),), "svdf_filter"), call)
        if self.scalar == "elem":   # requant, add / sub / mul, hardswish, slice, the Deeploy row ops, int_gelu
            return (Term(self.other, outs, "other"),
                    Term(self.other_row, (("oy", ident), ("ox", ident)), "other_row"), call)
        if self.scalar == "int":   # tw_int_conv on the whole layer, one core
            if kind == "dwconv":
                taps = Term((self.mac + self.int_tap) * F, outs, "int_dw_tap")
                macs = ()
            else:
                taps = Term(self.int_tap * F, outs, "int_tap")
                macs = (Term(self.mac * F, (*outs, ("c", ident)), "int_mac"),)
            return (*macs, taps, Term(self.int_out + self.rq_div, outs, "int_out"), call)
        if self.scalar == "lstm":   # tw_lstm: per step and cell 4·(I + H) MACs, the cell's update
            return (Term(self.lstm_mac * 4 * (nest.C + nest.K), outs, "lstm_mac"),
                    Term(self.lstm_cell, outs, "lstm_cell"), call)
        if self.scalar == "matmul":   # tw_int_matmul: C (a's last dim) MACs per output
            return (Term(self.int_mm_mac * nest.C, outs, "int_mm_mac"),
                    Term(self.int_mm_out + self.mm_rq, outs, "int_mm_out"), call)
        # reduce (tw_int_reduce): every input element (N·IY·IX·C, the input's batch taken as the
        # output's), then per output
        return (Term(self.int_red_in * nest.IY * nest.IX * nest.C, (), "int_red_in"),
                Term(self.int_red_out, outs, "int_red_out"), call)


#: the coefficients of the integer exports' kernels (module docstring "Integer exports"), fitted by
#: bench/calibrate_int.py (bench/calibrate_pulp.py and calibrate_m7.py hold them fixed)
INTEGER_EXPORTS = ("s16_mac", "s16_tap", "s16_dw_tap", "s16_out", "s16_rq_tflite", "s16_rq_real",
                   "s16_pool_tap", "s16_pool_out", "s16_add_elem", "s8_mac", "div64", "tadd_elem", "tadd_entry",
                   "int_mac", "int_mac64", "int_tap", "int_out", "int_rq_elem", "int_add_elem",
                   "int_bin_elem", "int_hsw_elem", "int_mm_mac", "int_mm_out", "int_red_in",
                   "int_red_out")
#: Deeploy's row operators on a host core: fitted by bench/calibrate_host_rows.py where they stay
#: in use (targets/stm32h7.py KERNELS_INSTRUCTIONS, counted; targets/pulp_open.py HOST, GVSoC — the PULP
#: clusters run them with their own kernels, bindings/pulp/rows.py); the defaults here are the
#: old assumption. Every other calibration keeps them at the model's values
ASSUMED_INT = ("int_smx_elem", "int_rms_elem", "int_ln_elem", "int_gelu_elem", "int_ita_elem")

#: terms the factors of `from_l2` leave alone: the requantization (arithmetic), the per-tile
#: call, and the integer exports' kernels, whose coefficients are fitted where each module runs
#: them (L1 on the cluster, L2 on a host core)
_AS_FITTED = frozenset({"requant", "tile", "s16_out", "s16_div", "s16_dw_tap", "s16_mac", "s16_tap",
                        "s16_pool_tap", "s16_pool_out", "s16_add",
                        "int_dw_tap", "int_tap", "int_mac", "int_out", "int_mm_mac", "int_mm_out",
                        "int_red_in", "int_red_out", "lstm_mac", "lstm_cell", "call"})


@dataclass(frozen=True)
class SubbyteCost:
    """Cycles of tw_pulp_conv2d_sb on one tile (the binding's KernelModel, bindings/cost_terms.py),
    fitted on GVSoC pulp-open by bench/pulp_subbyte_fit.py (27 geometries — 1×1, 2×2, 3×3, 5×5,
    dense; 4–512 input, 4–64 output channels; every weight width; shift32 requantization — on
    1 and 8 cores; bench/pulp_subbyte_fit.json). On P cores, per tile:

        Σ_pixels [ mac[w_bits]·FY·FX·C·K + unpack[x_bits]·FY·FX·C + (out + requant)·K
                   + tap·FY·FX ]·spread(P) / P  +  call(P)

    `mac`: the 4x2 MatMul per MAC by weight width (14, 36 and 72 instructions per step of 32,
    64 and 128 MACs: 0.44 / 0.56 / 0.56 counted); `unpack`: the im2col per reduction element by
    input width (a word copy, or a mask and a shift per four u4 / u2 lanes, and their stores);
    `out`: per output the QntPack (shift32 requantization, clamp, packing) and the 4-channel
    block's set-up; `tap`: per receptive-field tap of a pixel, the im2col's call and bounds check;
    `call(P)`: the fork, the core split and the barrier (fitted at 1 and 8 cores, linear between);
    `spread(P)`: the 8-core fit's factor on the slowest core's share (GVSoC models no TCDM bank
    conflicts), linear between. Pixels go to the cores by whole pairs (tw_pulp_share): the
    slowest core has ⌈pairs/P⌉, taken at the layer's width (exact for full-width row tiles). A
    dense layer (one pixel) splits its 4-channel blocks over the cores instead, every core
    unpacking the whole input (`_fc_terms`). Against that run (the json): 1 core 0.82–1.22 of
    the measured cycles, 8 cores 0.80–1.12 but for one 2,592-cycle and one 3,072-cycle layer
    (0.67, 1.61: fewer pixel pairs than cores, whose channel groups, tw_pulp_groups, are not
    modelled); layers above 10k cycles within ±10%.

    `requant` is the requantization beyond shift32's, by the binding's mode (`for_key`):
    ASSUMED from the int8 kernels' measured costs of the same tw_pulp_rq (PulpKernels: tflite
    20.4, shift 12.0, onnx 42.4 cycles per output, onnx in integers: bench/calibrate_onnx_requant.py), not refitted here
    — the figures of the module's own PulpKernels (`priced_by`: the model the target passes to
    pulp.bindings); tests/test_pulp_subbyte_net.py holds the model with onnx requantization
    against a generated network on GVSoC.
    """

    name: str = "pulp-subbyte"
    mac: tuple[tuple[int, float], ...] = ((8, 0.450), (4, 0.571), (2, 0.571))
    unpack: tuple[tuple[int, float], ...] = ((8, 0.694), (4, 0.705), (2, 1.20))
    out: float = 40.6
    tap: float = 71.3
    call_1: float = 3560.0
    call_8: float = 2068.0
    #: the work on 8 cores over the slowest core's share of it (1.0: GVSoC's TCDM has no
    #: conflicts), linear in between
    spread_8: float = 0.935
    #: tw_pulp_rq's cycles per output by mode: the module's PulpKernels figures (`priced_by`)
    requant_tflite: float = PulpKernels.requant_tflite
    requant_shift: float = PulpKernels.requant_shift
    requant_onnx: float = PulpKernels.requant_onnx
    #: the sub-byte kernels' onnx requantization beyond the int8 kernels' (requant_onnx): GVSoC,
    #: tests/test_pulp_subbyte_net.py's network (pulp-open, 8 cores; its three convs 25-46 cycles
    #: per output beyond at requant_onnx = 42.4, this figure fitted on the network's cycles)
    onnx_extra: float = 44.2
    requant: float = 0.0

    def priced_by(self, model: object) -> SubbyteCost:
        """This model on a module whose int8 kernels `model` prices: its per-mode requantization
        figures when it is a PulpKernels (the same tw_pulp_rq); another model (a peer library's,
        PULP-NN in the tests) has none, and the defaults (PulpKernels') stay."""
        if not isinstance(model, PulpKernels):
            return self
        return replace(self, requant_tflite=model.requant_tflite,
                       requant_shift=model.requant_shift, requant_onnx=model.requant_onnx)

    def for_key(self, key) -> SubbyteCost:
        """The model of one binding: its mode's requantization beyond shift32's (class doc)."""
        extra = {"onnx": self.requant_onnx + self.onnx_extra,
                 "tflite": self.requant_tflite}.get(key.mode, self.requant_shift)
        return replace(self, requant=extra - self.requant_shift)

    def call(self, cores: int) -> float:
        return self.call_1 + (self.call_8 - self.call_1) * (max(cores, 1) - 1) / 7.0

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        """The class formula as separable terms of one tile (bindings/cost_terms.py)."""
        p, f = max(cores, 1), nest.FY * nest.FX
        g = 1.0 + (self.spread_8 - 1.0) * (p - 1) / 7.0
        mac, unpack = g * dict(self.mac)[nest.w_bits] * f, g * dict(self.unpack)[nest.x_bits] * f
        out, tap = g * (self.out + self.requant), g * self.tap * f
        call = Term(self.call(p), (), "call")
        if nest.kind == "fc":
            return (*self._fc_terms(p, mac, unpack, out, tap), call)
        width, pairs = nest.OX, 2 * p

        def rows(s, first, last):
            # P times the slowest core's pixels per output column: whole pairs per core, the
            # tile's rows taken at the layer's width (exact for full-width tiles)
            return np.ceil(s * width / pairs) * pairs / width if p > 1 else s.astype(np.float64)

        pix = (("n", ident), ("oy", rows), ("ox", ident))
        k, c = ("k", ident), ("c", ident)
        return (Term(mac / p, (*pix, k, c), "macs"), Term(unpack / p, (*pix, c), "unpack"),
                Term(out / p, (*pix, k), "out"), Term(tap / p, pix, "taps"), call)

    @staticmethod
    def _fc_terms(p: int, mac: float, unpack: float, out: float, tap: float) -> tuple[Term, ...]:
        """A dense tile: the slowest core's 4-channel blocks, ⌈⌈k/4⌉/P⌉, and the whole input's
        unpack on every core."""
        def share(s, first, last):
            return 4.0 * np.ceil(np.ceil(s / 4) / p)

        n = ("n", ident)
        return (Term(mac, (n, ("k", share), ("c", ident)), "macs"),
                Term(out, (n, ("k", share)), "out"),
                Term(unpack, (n, ("c", ident)), "unpack"), Term(tap, (n,), "taps"))

    def cycles(self, n: LoopNest, cores: int) -> float:
        """Predicted cycles of LoopNest `n` run as one tile on `cores` cores."""
        dims = ("n", "k", "c", "oy", "ox")
        whole = {"n": n.N, "k": n.K, "c": n.C if n.kind in REDUCING else 1, "oy": n.OY, "ox": n.OX}
        size = {d: np.asarray(whole[d]) for d in dims}
        one = {d: np.asarray(True) for d in dims}
        return float(tile_cycles(self.terms(n, cores), size, one, one))


@dataclass(frozen=True)
class MatMulActCost:
    """The MatMul of two int8 activations (bindings/pulp/mm_act.py, c/tw_pulp_mm_act.h), run as the
    layer's own function: heads H = N·OY, rows m = OX, reduction k = C, columns n = K; a tile of
    r rows (mm_act.m_tile) on P cores, the busiest core's share:
    - the 4x4 blocks (the uniform requantization's fast path, when the tile has a row quad per
      core): per (row quad, 4-column block) ⌈k/4⌉ steps (`step4`: 8 p.lw + 16 sdotp4) and the
      block's 16 outputs (`block4`), ⌈⌊r/4⌋/P⌉ quads per core;
    - the rows left (all of them without the fast path) as 4x2 blocks: per (row pair, block)
      ⌈k/4⌉ steps (`step`) and the 8 outputs (`block`), the pairs split over the cores (or, with
      fewer pairs than cores, the column blocks too: pairs/P); k not a multiple of 4 takes the
      general path's byte leftovers (`tail` per pair and block);
    - bᵀ per head: k values per column, ⌈n/P⌉ columns per core (`transpose`);
    - DMA (the cluster: `dma` per byte of a, b and y, blocking), per row tile (`tile`: transfers
      issued and waited by core 0, barriers), per head (`head`), per call (`call`: the fork, the
      words' transfer).
    Built for Arm (`arm`: the Cortex-M7 reading its SRAM in place, tw_pulp_matmul_arm.h's 2x2
    SMLAD blocks) no 4x4 path and no DMA terms. Assumed: one requantization for the tensor with
    zero point 0 (Deeploy's RequantShift); a per-column one runs the general path, slower than
    priced. Coefficients: RI5CY fitted on GVSoC pulp-open cycles on 8 and 1 cores, Cortex-M7 on
    counted instructions (bench/calibrate_mm_act.py, bench/calibration_mm_act.json).
    """

    name: str = "pulp-mm-act"
    arm: bool = False
    # RI5CY on GVSoC pulp-open (bench/calibration_mm_act.json "ri5cy_gvsoc_cycles"); `tile` and
    # part of `dma` came out 0: each tile's transfers are in `head` for one-tile layers
    step4: float = 23.1402
    block4: float = 200.2123
    step: float = 15.8049
    block: float = 74.7784
    tail: float = 133.4442
    transpose: float = 2.125
    dma: float = 0.044
    tile: float = 0.0
    head: float = 2684.7219
    call: float = 2740.2882

    def shares(self, m: int, k: int, n: int, yb: int, p: int) -> tuple[float, float]:
        """The busiest core's row quads and row pairs over the layer's row tiles of m rows."""
        from .mm_act import m_tile

        mt = m_tile(m, k, n, yb)
        quads = pairs = 0.0
        for r0 in range(0, m, mt):
            r = min(mt, m - r0)
            q = r // 4 if (r // 4 >= p and not self.arm and k % 4 == 0) else 0
            quads += -(-q // p)
            rest = -(-(r - 4 * q) // 2)
            pairs += -(-rest // p) if rest >= p else rest / p
        return quads, pairs

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        from .mm_act import m_tile

        p = max(cores, 1)
        yb = max(nest.y_bits, 8) // 8
        k, n = nest.C, nest.K
        mt = m_tile(nest.OX, k, n, yb)
        k4 = float(np.ceil(k / 4))     # the reduction: not a loop dim of "other"
        tail = 1.0 if k % 4 else 0.0

        def quads(s, first, last):
            return np.vectorize(lambda m: self.shares(int(m), k, n, yb, p)[0])(s).astype(np.float64)

        def pairs(s, first, last):
            return np.vectorize(lambda m: self.shares(int(m), k, n, yb, p)[1])(s).astype(np.float64)

        def cols(s, first, last):
            return np.ceil(s / p)

        def tiles(s, first, last):
            return np.ceil(s / mt)

        heads = (("n", ident), ("oy", ident))
        blocks = ("k", ceil4)
        t = [Term(self.step4 * k4, (*heads, ("ox", quads), blocks), "mm4"),
             Term(self.block4, (*heads, ("ox", quads), blocks), "block4"),
             Term(self.step * k4, (*heads, ("ox", pairs), blocks), "mm"),
             Term(self.block, (*heads, ("ox", pairs), blocks), "block"),
             Term(self.tail * tail, (*heads, ("ox", pairs), blocks), "tail"),
             Term(self.transpose * k, (*heads, ("k", cols)), "transpose"),
             Term(self.head, heads, "head"), Term(self.call, (), "call")]
        if not self.arm:
            t += [Term(self.dma * k, (*heads, ("ox", ident)), "dma_a"),
                  Term(self.dma * yb, (*heads, ("ox", ident), ("k", ident)), "dma_y"),
                  Term(self.dma * k, (*heads, ("k", ident)), "dma_b"),
                  Term(self.tile, (*heads, ("ox", tiles)), "tile")]
        return tuple(t)

    #: the coefficients a calibration fits (bench/calibrate_mm_act.py)
    COEFFICIENTS = ("step4", "block4", "step", "block", "tail", "transpose", "dma", "tile", "head", "call")

    def cycles(self, nest: LoopNest, cores: int) -> float:
        """Predicted cycles of the whole layer (it runs untiled: every size the nest's)."""
        size = {"n": np.asarray(nest.N), "k": np.asarray(nest.K), "oy": np.asarray(nest.OY),
                "ox": np.asarray(nest.OX), "c": np.asarray(nest.C)}
        one = {d: np.asarray(True) for d in size}
        return float(tile_cycles(self.terms(nest, cores), size, one, one))


#: the MatMul of two activations built for Arm, in executed Cortex-M7 instructions
#: (bench/calibration_mm_act.json "cortex_m7_instructions"; stm32h7's module)
MM_ACT_M7 = MatMulActCost(name="pulp-mm-act-m7", arm=True, step4=0.0, block4=0.0, step=32.8614,
                          block=127.7705, tail=64.1633, transpose=17.6, dma=0.0, tile=0.0,
                          head=2293.9511, call=184.5479)
