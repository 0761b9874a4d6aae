"""The cost model of the NE16 bindings (bindings/ne16) on GAP9: the accelerator's job plus the
cluster's share of a tile (the u8 conversion of the input, the requantization of the int32 output).

NE16's cycles follow MATCH's GAP9 NE16 model (eml-eda/match `target/examples/gap9/ne16/
cost_model.py`, derived from the PLiNIO NE16 model; notes/accelerators.md), FIFO depth 6:
- the output is cut into 3×3-pixel subtiles (NE16's 9 columns) × 32-channel blocks (TP_OUT);
  per subtile and output block, for every 16-channel input block (TP_IN): load = 6 + Hi·Wi
  (the subtile's input window, Hi = 2·SY + 3 rows — 5×5 at stride 1, 7×7 at stride 2 — one
  256-bit beat per pixel of 16 channels), 1×1: 10 + 9; weight offset = 6; matrix-vector =
  6 + taps · weight bits (1×1: 6 + weight bits); update = 2. The weight bits are the binding's
  (`weight_bits`, one copy per LoopNest.w_bits 2..8: bindings/ne16 `bindings`): NE16 streams one
  bit plane per tap and cycle (the bit-serial datapath, bindings/ne16/arith.py), as the model's
  WEIGHTS_BITWIDTH parameter (MATCH / PLiNIO `Ne16PerfModel`) — fewer bits, fewer cycles; the
  weights' transfers shrink with them through the plan's ⌈elements·bits/8⌉ (ir/operands.py);
- then the stream-out of the subtile's int32 outputs: 4 + 9 · ⌈32 · 32 / 256⌉ = 40 (the cluster
  requantizes, so the norm-quant stage is not used);
- depthwise: per 16-channel block (input and output channels are the same block) one load,
  offset + 9 (the note's "+k for depthwise"), matrix-vector and update, then its 16 channels'
  stream-out, 4 + 9 · ⌈16 · 32 / 256⌉ = 22.
The cluster: the cores convert the tile's input to u8 (x ^ 0x80, a word at a time: `convert` per
byte and core, each its share), then core 0 programs the job (`job`, pulp-nnx's task set-up and dispatch, assumed); then
the 8 cores requantize the int32 outputs (tw_ne16_requant_s8_<variant>, `requant` per output and core),
in parallel. `convert` and the tflite-mode `requant` are measured on GVSoC's pulp-open cluster
(tests/test_ne16_gvsoc.py, which holds this model within ±20% of the measurement) at the tiles
of the MLPerf Tiny NE16 layers on 1 and 8 cores, the empty fork subtracted: tflite_right (the
variant of 52 of those 58 layers) 31.7 to 33.8 cycles per output and core (36.6 for vww's first
layer, whose 8 channels leave more per-pixel overhead), priced at 32.5; the general tflite
variant 36.4 (its vww layers are priced at tflite_right's figure: the binding key carries the
mode, not the variant); the conversion 2.27 per byte. (The element-by-element kernel these
replaced measured 50.2 / 54.3 per output and 6.0 per byte.) The one-mulh form of the *_mulh
bindings (tw_ne16_requant_s8_mulh_<variant>, channel pairs over the pixels) measured 20.4 to
21.4 cycles per output and core at those tiles on 8 cores (23.2 / 23.4 where 64 or 9 pixels
split unevenly), priced at 21.0. Shift and onnx modes keep the pulp model's figures (not measured
for this pass). NE16's own cycles cannot be measured here: GVSoC models pulp-open, which has no
NE16; every other coefficient is the source's or stated as assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...ir.layer import LoopNest
from ..cost_terms import Term, ceil_div, ident, per_image
from . import pipeline


@dataclass(frozen=True)
class Ne16Kernels:
    """NE16 cycles per job step and the cluster's per-tile work (module docstring)."""

    name: str = "ne16"
    fifo: float = 6.0
    update: float = 2.0
    weight_bits: int = 8            # the binding's weight bit planes (LoopNest.w_bits)
    stream_out: float = 40.0        # 9 int32 outputs of 32 channels
    stream_out_dw: float = 22.0     # 9 int32 outputs of 16 channels
    convert: float = 2.27           # per input byte and core (GVSoC, module docstring)
    job: float = 400.0              # set-up, dispatch, wait and barrier per job (assumed)
    #: per output and core, by mode (GVSoC for tflite, its tflite_right variant; module docstring)
    requant_tflite: float = 32.5
    requant_shift: float = 12.0     # pulp/cost.py requant_shift (not measured here)
    requant_onnx: float = 42.4      # pulp/cost.py requant_onnx (not measured here)
    requant: float = 32.5           # the mode this copy prices (for_key)
    #: per output and core, the one-mulh form of tflite / tflite_right (the *_mulh bindings,
    #: bindings/ne16/requant.py; GVSoC, module docstring)
    requant_mulh: float = 21.0
    tile: float = 1324.0            # the compute call and its two barriers (pulp model's `tile`)
    #: NE16 requantizes (norm-quant), no cluster pass: per subtile and output block the stage's
    #: shift ⌈32/4⌉ + scale (9 + ⌈9·32/32⌉) + bias (8 + ⌈9/8⌉) = 36 and the int8 stream-out
    #: 4 + 9·⌈32·8/256⌉ = 13 (depthwise, 16 channels: 4 + 18 + 10 = 32 and 4 + 9 = 13)
    norm_quant: bool = False
    nq_out: float = 36.0 + 13.0
    nq_out_dw: float = 32.0 + 13.0

    def for_key(self, key) -> Ne16Kernels:
        """The model of one binding: the requantization of its mode on the cluster."""
        return replace(self, requant={"onnx": self.requant_onnx, "shift": self.requant_shift}
                       .get(key.mode, self.requant_tflite))

    def _block(self, nest: LoopNest) -> float:
        """NE16 cycles of one 16-channel input block of one subtile and output block."""
        taps = nest.FY * nest.FX
        if taps == 1:
            return (10 + 9) + self.fifo + (self.fifo + self.weight_bits) + self.update
        win = (2 * nest.SY + 3) * (2 * nest.SX + 3)
        offset = self.fifo + (9 if nest.kind == "dwconv" else 0)
        return (self.fifo + win) + offset + (self.fifo + taps * self.weight_bits) + self.update

    def _band(self, nest: LoopNest) -> tuple[tuple[float, tuple, str], ...]:
        """NE16's cycles of one 3-row band of a tile as (coefficient, factors, label): per 3×3
        subtile (ox in threes) the input blocks' steps and the output blocks' stream-out (or
        norm-quant and int8 stream-out); depthwise per 16-channel block."""
        x3 = ("ox", ceil_div(3))
        block = self._block(nest)
        if nest.kind == "dwconv":
            out = self.nq_out_dw if self.norm_quant else self.stream_out_dw
            return ((block + out, (x3, ("k", ceil_div(16))), "ne16"),)
        out = self.nq_out if self.norm_quant else self.stream_out
        return ((block, (x3, ("k", ceil_div(32)), ("c", ceil_div(16))), "ne16"),
                (out, (x3, ("k", ceil_div(32))), "stream_out"))

    def engine_terms(self, nest: LoopNest) -> tuple[Term, ...]:
        """NE16's own cycles of a tile (its jobs from trigger to end, summed; no job programming,
        no cluster work): the band terms over all its 3-row bands (a tile's row jobs are whole
        bands but the last, bindings/ne16/pipeline.py, so they cover ⌈oy/3⌉ bands)."""
        return per_image(Term(c, (("oy", ceil_div(3)), *f), lb) for c, f, lb in self._band(nest))

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        """A tile's cycles. Int32 output (the cluster requantizes): the row-job pipeline of
        bindings/ne16/pipeline.py, convert + J·job + N(job 0) + Σ_{j<J-1} max(N(job j+1),
        R(job j)) + R(job J-1) + tile, as overlap groups (bindings/cost_terms.py): "steady" the J-2
        steps of two full jobs, "last" the step of the last job beside the previous one's
        requantization. A job's N is NE16's cycles of its 3-row bands, R the requantization of
        its rows; both are the per-band / per-row terms below times an oy factor."""
        P = max(cores, 1)
        iy = ("oy", lambda s, f, l: (s - 1) * nest.SY + nest.FY)
        ix = ("ox", lambda s, f, l: (s - 1) * nest.SX + nest.FX)
        band = self._band(nest)
        ch = "k" if nest.kind == "dwconv" else "c"
        convert = Term(self.convert / P, (iy, ix, (ch, ident)), "convert")
        tile = Term(self.tile, (), "tile")
        if self.norm_quant:             # one job: NE16 writes the outputs
            terms = (*(Term(c, (("oy", ceil_div(3)), *f), lb) for c, f, lb in band), convert,
                     Term(self.job, (), "job"), tile)
        else:
            row = (self.requant / P, (("ox", ident), ("k", ident)), "requant")
            terms = (*(Term(c, (("oy", _fill), *f), lb) for c, f, lb in band),
                     *(Term(c, (("oy", _steady_bands), *f), lb, "steady", 0) for c, f, lb in band),
                     Term(row[0], (("oy", _steady_rows), *row[1]), row[2], "steady", 1),
                     *(Term(c, (("oy", _last_bands), *f), lb, "last", 0) for c, f, lb in band),
                     Term(row[0], (("oy", _last_step_rows), *row[1]), row[2], "last", 1),
                     Term(row[0], (("oy", _drain), *row[1]), row[2]),
                     convert, Term(self.job, (("oy", _jobs),), "job"), tile)
        return per_image(terms)


# oy factors of the row-job pipeline (bindings/ne16/pipeline.py): J jobs of R rows, the last of L
def _jobs(s, f, l):
    return pipeline.jobs(s).astype(np.float64)


def _bands(rows):
    return (rows + 2) // 3


def _fill(s, f, l):
    """NE16 bands of job 0 (the whole tile's when it is the only job)."""
    return _bands(pipeline.rows(s)).astype(np.float64)   # one job: rows(s) == last_rows(s)


def _steady(s):
    """Steps of two full jobs: J - 2 (none with fewer than 2 jobs)."""
    return np.maximum(pipeline.jobs(s) - 2, 0)


def _steady_bands(s, f, l):
    return (_steady(s) * _bands(pipeline.rows(s))).astype(np.float64)


def _steady_rows(s, f, l):
    return (_steady(s) * pipeline.rows(s)).astype(np.float64)


def _last_bands(s, f, l):
    """NE16 bands of the last job while the cores requantize the one before (J ≥ 2)."""
    return np.where(pipeline.jobs(s) > 1, _bands(pipeline.last_rows(s)), 0).astype(np.float64)


def _last_step_rows(s, f, l):
    return np.where(pipeline.jobs(s) > 1, pipeline.rows(s), 0).astype(np.float64)


def _drain(s, f, l):
    """Rows of the last job, requantized after NE16 is done."""
    return pipeline.last_rows(s).astype(np.float64)
