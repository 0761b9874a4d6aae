"""The cost model of the NE16 bindings (bindings/ne16) on GAP9: the accelerator's job plus the
cluster's share of a tile (the u8 conversion of the input, the requantization of the int32 output).

NE16's cycles follow MATCH's GAP9 NE16 model (eml-eda/match `target/examples/gap9/ne16/
cost_model.py`, derived from the PLiNIO NE16 model; notes/accelerators.md), FIFO depth 6:
- the output is cut into 3×3-pixel subtiles (NE16's 9 columns) × 32-channel blocks (TP_OUT);
  per subtile and output block, for every 16-channel input block (TP_IN): load = 6 + Hi·Wi
  (the subtile's input window, Hi = 2·SY + 3 rows — 5×5 at stride 1, 7×7 at stride 2 — one
  256-bit beat per pixel of 16 channels), 1×1: 10 + 9; weight offset = 6; matrix-vector =
  6 + taps · weight bits (1×1: 6 + weight bits); update = 2;
- then the stream-out of the subtile's int32 outputs: 4 + 9 · ⌈32 · 32 / 256⌉ = 40 (the cluster
  requantizes, so the norm-quant stage is not used);
- depthwise: per 16-channel block (input and output channels are the same block) one load,
  offset + 9 (the note's "+k for depthwise"), matrix-vector and update, then its 16 channels'
  stream-out, 4 + 9 · ⌈16 · 32 / 256⌉ = 22.
The cluster: the cores convert the tile's input to u8 (x ^ 0x80, a word at a time: `convert` per
byte and core, each its share), then core 0 programs the job (`job`, pulp-nnx's task set-up and dispatch, assumed); then the 8
cores requantize the int32 outputs (tw_ne16_requant_s8_<variant>, `requant` per output and core),
in parallel. `convert` and the tflite-mode `requant` are measured on GVSoC's pulp-open cluster
(tests/test_ne16_gvsoc.py, which holds this model within ±20% of the measurement) at the tiles
of the MLPerf Tiny NE16 layers on 1 and 8 cores, the empty fork subtracted: tflite_right (the
variant of 52 of those 58 layers) 31.7 to 33.8 cycles per output and core (36.6 for vww's first
layer, whose 8 channels leave more per-pixel overhead), priced at 32.5; the general tflite
variant 36.4 (its vww layers are priced at tflite_right's figure: the binding key carries the
mode, not the variant); the conversion 2.27 per byte. (The element-by-element kernel these
replaced measured 50.2 / 54.3 per output and 6.0 per byte.) Shift and onnx modes keep the pulp model's figures (not measured
for this pass). NE16's own cycles cannot be measured here: GVSoC models pulp-open, which has no
NE16; every other coefficient is the source's or stated as assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir.layer import LoopNest
from .compute import Term, ceil_div, ident


@dataclass(frozen=True)
class Ne16Kernels:
    """NE16 cycles per job step and the cluster's per-tile work (module docstring)."""

    name: str = "ne16"
    fifo: float = 6.0
    update: float = 2.0
    weight_bits: int = 8
    stream_out: float = 40.0        # 9 int32 outputs of 32 channels
    stream_out_dw: float = 22.0     # 9 int32 outputs of 16 channels
    convert: float = 2.27           # per input byte and core (GVSoC, module docstring)
    job: float = 400.0              # task set-up, dispatch and wait per tile (assumed)
    #: per output and core, by mode (GVSoC for tflite, its tflite_right variant; module docstring)
    requant_tflite: float = 32.5
    requant_shift: float = 12.0     # targets/pulp_kernels.py requant_shift (not measured here)
    requant_onnx: float = 1049.0    # targets/pulp_kernels.py requant_onnx (not measured here)
    requant: float = 32.5           # the mode this copy prices (for_key)
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

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        P = max(cores, 1)
        sub = (("oy", ceil_div(3)), ("ox", ceil_div(3)))
        pix = (("oy", ident), ("ox", ident))
        iy = ("oy", lambda s, f, l: (s - 1) * nest.SY + nest.FY)
        ix = ("ox", lambda s, f, l: (s - 1) * nest.SX + nest.FX)
        block = self._block(nest)
        if nest.kind == "dwconv":
            out = self.nq_out_dw if self.norm_quant else self.stream_out_dw
            ne16 = (Term(block + out, (*sub, ("k", ceil_div(16))), "ne16"),)
            convert = Term(self.convert / P, (iy, ix, ("k", ident)), "convert")
        else:
            out = self.nq_out if self.norm_quant else self.stream_out
            ne16 = (Term(block, (*sub, ("k", ceil_div(32)), ("c", ceil_div(16))), "ne16"),
                    Term(out, (*sub, ("k", ceil_div(32))), "stream_out"))
            convert = Term(self.convert / P, (iy, ix, ("c", ident)), "convert")
        requant = () if self.norm_quant else (Term(self.requant / P, (*pix, ("k", ident)),
                                                   "requant"),)
        terms = (*ne16, convert, *requant, Term(self.job + self.tile, (), "tile"))
        return tuple(Term(t.coef, (("n", ident), *t.factors), t.label) for t in terms)
