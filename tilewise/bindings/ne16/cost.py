"""The cost model of the NE16 bindings (bindings/ne16) on GAP9 and pulp-open-ne16: the
accelerator's jobs plus the cluster's share of a tile (the u8 conversion of the input, the
requantization of the int32 output).

NE16's own cycles (`engine`):
"gvsoc" (the default, gap9's and pulp-open-ne16's): fitted on GVSoC's NE16 (pulp-open with
GVSOC_NE16=1; bench/calibrate_ne16.py, bench/calibration_ne16.json), in the steps GVSoC's model
times a job by (../shared/tools/gvsoc README "How the model times a job"; `Gvsoc` below): per 3×3
output subtile × output-channel group × 16-channel input group a load of the subtile's input
window (one pixel per cycle, held at 1; a 1×1 subtile loads its 9), a fixed latency and one cycle
per output channel and weight bit (3×3, depthwise) or per output channel (1×1); per subtile and
group the norm-quant stage and the stored 256-bit beats; per job its start and the polled end.
Each term is exact over partial subtiles and channel groups (sums of ⌈·/3⌉, window rows, ⌈k/32⌉
...), so tiles and row jobs of any size are priced as they run. Measured on the MLPerf Tiny NE16
layers and small 3×3 / 1×1 / depthwise / dense layers, int32 streamout and norm-quant, whole and
tiled (bench/calibration_ne16.json; tests/test_ne16_engine_gvsoc.py holds each layer kind within
±15%). Stride 2 is priced by the same steps over its wider window (not measured: pulp-open-ne16
keeps stride-2 layers on the cluster); weights narrower than 8 bits by their fewer bit planes on
3×3 and depthwise (the bit-serial datapath), unchanged on 1×1 (the bits in parallel) — neither
measured.
"match": MATCH's GAP9 NE16 model, the peer of comparison tables (`MATCH_NE16`):

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
The cluster: the cores but core 0 convert the tile's input to u8 (x ^ 0x80, a word at a time:
`convert` per byte and core, each its share; `converters`) while core 0 sets the tile's job up (in
`tile`), then core 0 programs each job (`job`; Ne16Kernels' defaults assume them, `GVSOC_CLUSTER`,
gap9's and pulp-open-ne16's, fits both on GVSoC); then
the 8 cores requantize the int32 outputs (tw_ne16_requant_s8_<variant>, `requant` per output and core),
in parallel: the job's channel-pair columns laid end to end and cut into runs balanced to a pair
of outputs, core 0's TW_NE16_DISPATCH_OUTPUTS (36) short of the others' when it dispatched the
next job first (c/tw_ne16_kernels.c requant_share), so the requantization is priced at its even
share and `job` is what core 0's wait, the barrier and the dispatch still cost per job.
`convert` and the tflite-mode `requant` are measured on GVSoC's pulp-open cluster
(tests/test_ne16_gvsoc.py, which holds this model within ±20% of the measurement) at the tiles
of the MLPerf Tiny NE16 layers on 1 and 8 cores, the empty fork subtracted: tflite_right (the
variant of 52 of those 58 layers) 31.7 to 33.8 cycles per output and core (36.6 for vww's first
layer, whose 8 channels leave more per-pixel overhead), priced at 32.5; the general tflite
variant 36.4 (its vww layers are priced at tflite_right's figure: the binding key carries the
mode, not the variant); the conversion 2.27 per byte. (The element-by-element kernel these
replaced measured 50.2 / 54.3 per output and 6.0 per byte.) The one-mulh form of the *_mulh
bindings (tw_ne16_requant_s8_mulh: channel pairs over the pixels, one hardware loop of 18
instructions and two 5-cycle mulh per pixel — p.mac for the tie adjustment, p.addNr, those
layers' [-128, 127] clamp in one p.clip, p.sb with the pixel step — its words compiled per
channel) measured 14.0 to 15.1 cycles per output and core at those tiles on 8 cores (17.1 / 17.3
where 64 or 9 pixels split unevenly; 13.6–14.2 on 1 core), priced at 14.5 (in C with the words
decoded per call it measured 20.4 to 21.4, 23.2 / 23.4, priced at 21.0). Shift and onnx modes
keep the pulp model's figures (not measured for this pass). Every other coefficient is the
source's or stated as assumed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ...ir.layer import LoopNest
from ..cost_terms import Term, ceil_div, ident, on_first, per_image
from . import pipeline


@dataclass(frozen=True)
class Gvsoc:
    """NE16's cycles per step as GVSoC's model times them (module docstring), the coefficients
    fitted on its measurements (bench/calibrate_ne16.py, bench/calibration_ne16.json). Per 3×3
    output subtile s (ho × wo pixels of a job) and output-channel group g (n_g ≤ 32 channels;
    depthwise: 16-channel blocks, input = output), for every 16-channel input group: `load` per
    input pixel of the subtile's window ((ho − 1)·S + F rows × (wo − 1)·S + F columns), `lat`
    (3×3) / `lat_1x1` / `lat_dw`, then `mv` per output channel and weight bit (3×3, depthwise) or
    `mv_1x1` per output channel (1×1: the bits in parallel); per (s, g): `nq` / `nq_1x1` / `nq_dw`
    with norm-quant (its 32-bit scales and bias) and `nq_ch` per channel of the group, and `beat`
    per 256-bit beat stored (a pixel of n_g int32 outputs is ⌈n_g/8⌉ beats, of int8 outputs one);
    per job `job` (trigger to start, the end seen by polling).
    Fitted (bench/calibration_ne16.json: 65 NE16 layers timed alone — kws_dscnn, ic_resnet8,
    vww_mobilenet_v1_025 as partitioned, kws_dscnn and ic_resnet8 in NE16's shift requantization
    with norm-quant, NEMO's network, 13 small layers whole and tiled): per kind Σ predicted /
    Σ measured 3×3 1.003, 3×3+nq 1.000, 1×1 1.002, 1×1+nq 1.008, depthwise 1.001, depthwise+nq
    0.989, dense 0.991, dense+nq 0.988; every layer within 0.94–1.06. MATCH's model on the same
    layers, per kind: 0.70–1.02 (3×3 0.82, 1×1 0.78, depthwise 0.83)."""

    load: float = 1.0           # held (GVSoC README: one input pixel per cycle)
    lat: float = 20.039
    lat_1x1: float = 25.048
    lat_dw: float = 29.588
    mv: float = 1.003
    mv_1x1: float = 0.925
    nq: float = 6.82
    nq_1x1: float = 15.208
    nq_dw: float = 17.048
    nq_ch: float = 0.724
    beat: float = 0.925
    job: float = 14.326


GVSOC = Gvsoc()


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
    job: float = 400.0              # dispatch, wait and barrier per job (assumed; GVSOC_CLUSTER)
    #: per output and core, by mode (GVSoC for tflite, its tflite_right variant; module docstring)
    requant_tflite: float = 32.5
    requant_shift: float = 12.0     # pulp/cost.py requant_shift (not measured here)
    requant_onnx: float = 42.4      # pulp/cost.py requant_onnx (not measured here)
    requant: float = 32.5           # the mode this copy prices (for_key)
    #: per output and core, the one-mulh form of tflite / tflite_right (the *_mulh bindings,
    #: bindings/ne16/requant.py; GVSoC, module docstring)
    requant_mulh: float = 14.5
    tile: float = 1324.0            # the compute call and its two barriers (pulp model's `tile`;
                                    # GVSOC_CLUSTER: fitted with the job's set-up)
    #: NE16 requantizes (norm-quant), no cluster pass: per subtile and output block the stage's
    #: shift ⌈32/4⌉ + scale (9 + ⌈9·32/32⌉) + bias (8 + ⌈9/8⌉) = 36 and the int8 stream-out
    #: 4 + 9·⌈32·8/256⌉ = 13 (depthwise, 16 channels: 4 + 18 + 10 = 32 and 4 + 9 = 13)
    norm_quant: bool = False
    nq_out: float = 36.0 + 13.0
    nq_out_dw: float = 32.0 + 13.0
    #: NE16's own cycles: "gvsoc", the model fitted on GVSoC's NE16 (module docstring, `Gvsoc`),
    #: or "match", MATCH's model above (the peer of comparison tables)
    engine: str = "gvsoc"
    fit: Gvsoc = field(default_factory=lambda: GVSOC)
    #: the residual add fused into the requantization (conv2d_s8_mulh_add, residual.py): per
    #: output and core on top of `requant` (`residual_out`: the skip byte, two table reads, add,
    #: shift, clamp in tw_ne16_requant_s8_mulh_add's loop over channel pairs, 32 instructions per
    #: pair against the one-mulh pair loop's 18), and per table entry (2 × 256) on the layer's
    #: first tile, shared by the cores (`residual_table`: tw_pulp_add_fold_copy from L2,
    #: pulp/cost.py add_onnx_copy). `residual_out` fitted on GVSoC (pulp-open-ne16, ic_resnet8's
    #: three fused layers as partitioned, whole-layer cycles of the shipped firmware, so it also
    #: carries what the fused tile costs besides: the skip tile's DMA, the per-channel-pair set-up):
    #: predicted / measured 1.022, 0.958, 1.017 (tests/test_ne16_residual_gvsoc.py holds a small
    #: block within ±15%)
    residual: bool = False
    residual_out: float = 11.2
    residual_table: float = 8.0

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
        """MATCH's NE16 cycles of one 3-row band of a tile as (coefficient, factors, label): per
        3×3 subtile (ox in threes) the input blocks' steps and the output blocks' stream-out (or
        norm-quant and int8 stream-out); depthwise per 16-channel block."""
        x3 = ("ox", ceil_div(3))
        block = self._block(nest)
        if nest.kind == "dwconv":
            out = self.nq_out_dw if self.norm_quant else self.stream_out_dw
            return ((block + out, (x3, ("k", ceil_div(16))), "ne16"),)
        out = self.nq_out if self.norm_quant else self.stream_out
        return ((block, (x3, ("k", ceil_div(32)), ("c", ceil_div(16))), "ne16"),
                (out, (x3, ("k", ceil_div(32))), "stream_out"))

    def job_steps(self, nest: LoopNest) -> tuple[tuple[float, Callable, tuple, str], ...]:
        """NE16's cycles of one job of r output rows of a tile as (coefficient, g(r), the other
        dims' factors, label): the job's cycles are Σ coefficient · g(r) · Π factors. "match":
        MATCH's per-band model (`_band`, g = the job's 3-row bands); "gvsoc": `Gvsoc`'s steps,
        g the job's subtile rows (⌈r/3⌉), window rows (S·r + (F − S)·⌈r/3⌉), output rows or 1."""
        if self.engine == "match":
            return tuple((c, _bands, f, lb) for c, f, lb in self._band(nest))
        m, bits = self.fit, self.weight_bits
        S, F = nest.SX, nest.FX

        def win(sz, _f=None, _l=None, S=S, F=F):
            sz = np.asarray(sz)
            return (S * sz + (F - S) * ((sz + 2) // 3)).astype(np.float64)

        win_x = ("ox", win)
        x3 = ("ox", ceil_div(3))
        ox = ("ox", ident)
        one = _ones
        if nest.kind == "dwconv":
            b16 = ("k", ceil_div(16))
            steps = [(m.load, win, (win_x, b16), "ne16_load"),
                     (m.lat_dw, _bands, (x3, b16), "ne16_lat"),
                     (m.mv * bits, _bands, (x3, ("k", ident)), "ne16_mv")]
            out = [(m.nq_dw, _bands, (x3, b16), "ne16_nq"),
                   (m.nq_ch, _bands, (x3, ("k", ident)), "ne16_nq"),
                   (m.beat, _rows, (ox, b16), "ne16_out")] if self.norm_quant else \
                [(m.beat, _rows, (ox, ("k", ceil_div(8))), "ne16_out")]
        else:
            ko, ki = ("k", ceil_div(32)), ("c", ceil_div(16))
            if F == 1:              # a 1×1 subtile loads its 3×3 pixels, whole or not
                steps = [(9 * m.load, _bands, (x3, ko, ki), "ne16_load"),
                         (m.lat_1x1, _bands, (x3, ko, ki), "ne16_lat"),
                         (m.mv_1x1, _bands, (x3, ("k", ident), ki), "ne16_mv")]
            else:
                steps = [(m.load, win, (win_x, ko, ki), "ne16_load"),
                         (m.lat, _bands, (x3, ko, ki), "ne16_lat"),
                         (m.mv * bits, _bands, (x3, ("k", ident), ki), "ne16_mv")]
            out = [(m.nq if F == 3 else m.nq_1x1, _bands, (x3, ko), "ne16_nq"),
                   (m.nq_ch, _bands, (x3, ("k", ident)), "ne16_nq"),
                   (m.beat, _rows, (ox, ko), "ne16_out")] if self.norm_quant else \
                [(m.beat, _rows, (ox, ("k", ceil_div(8))), "ne16_out")]
        return (*steps, *out, (m.job, one, (), "ne16_job"))

    def engine_terms(self, nest: LoopNest) -> tuple[Term, ...]:
        """NE16's own cycles of a tile (its jobs from trigger to end, summed; no job programming,
        no cluster work): every job's steps (`job_steps`); the tile's row jobs
        (bindings/ne16/pipeline.py), or its one job with norm-quant."""
        if self.norm_quant:
            return per_image(Term(c, (("oy", _whole(g)), *f), lb)
                             for c, g, f, lb in self.job_steps(nest))
        return per_image(Term(c, (("oy", _all_jobs(g)), *f), lb)
                         for c, g, f, lb in self.job_steps(nest))

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
        steps = self.job_steps(nest)
        ch = "k" if nest.kind == "dwconv" else "c"
        convert = Term(self.convert / converters(cores), (iy, ix, (ch, ident)), "convert")
        tile = Term(self.tile, (), "tile")
        if self.norm_quant:             # one job: NE16 writes the outputs
            terms = (*(Term(c, (("oy", _whole(g)), *f), lb) for c, g, f, lb in steps), convert,
                     Term(self.job, (), "job"), tile)
        else:
            rq = self.requant + (self.residual_out if self.residual else 0.0)
            row = (rq / P, (("ox", ident), ("k", ident)), "requant")
            terms = (*(Term(c, (("oy", _fill(g)), *f), lb) for c, g, f, lb in steps),
                     *(Term(c, (("oy", _steady_of(g)), *f), lb, "steady", 0)
                       for c, g, f, lb in steps),
                     Term(row[0], (("oy", _steady_rows), *row[1]), row[2], "steady", 1),
                     *(Term(c, (("oy", _last_of(g)), *f), lb, "last", 0) for c, g, f, lb in steps),
                     Term(row[0], (("oy", _last_step_rows), *row[1]), row[2], "last", 1),
                     Term(row[0], (("oy", _drain), *row[1]), row[2]),
                     convert, Term(self.job, (("oy", _jobs),), "job"), tile)
        if self.residual:               # the add's folded tables, once per layer
            first = tuple((d, on_first) for d in ("k", "oy", "ox"))
            terms = (*terms, Term(2 * 256 * self.residual_table / P, first, "add_tables"))
        return per_image(terms)


#: MATCH's NE16 model (module docstring): the peer of comparison tables
MATCH_NE16 = Ne16Kernels(engine="match")

#: pulp-open-ne16's model (targets/pulp_open_ne16.py) and gap9's (targets/gap9.py): the cluster's
#: per-job and per-tile work fitted on GVSoC (bench/calibrate_ne16.py --cluster,
#: bench/calibration_ne16.json "cluster": the 36 NE16 layers of kws_dscnn, ic_resnet8 and
#: vww_mobilenet_v1_025 as partitioned, whole layer cycles of the shipped firmware). `job` 568.0:
#: core 0, per row job, waits for its end, meets the other cores at the barrier and dispatches
#: the next job from the tile's register image (tw_ne16_dispatch_rows: ACQUIRE, two pointers
#: patched, 24 register stores), while the other cores wait for it at the barrier and start on
#: the finished job's requantization, core 0's share of it TW_NE16_DISPATCH_OUTPUTS short
#: (measured with mcycle probes on kws_dscnn: the wait that sees a finished job ~150–200 cycles,
#: the barrier ~120, the dispatch ~310). `tile` 2137.3: the compute call and its barriers, and
#: what of core 0's set-up of the tile's job (tw_ne16_task_init / set_dims / set_addr,
#: tw_ne16_rows_init and the register image of job 0) the other 7 cores' conversion of the input
#: does not hide (`converters`). Fitted, the NE16 layers are predicted at 1.000 of their measured
#: cycles, per binding 0.954–1.045, every layer within 0.864–1.075. With equal requantization
#: shares (whole pixels or channels per core; `job` 803.6, `tile` 1559.7) the same layers
#: measured 1,338,888 cycles, now 1,307,122; before core 0's set-up ran beside the conversion
#: (`job` 893.2, `tile` 3214.7) 1,415,918; with `job` 1651.6 and `tile` 2224.1 before the
#: register images. NE16's second job context kept full (pipeline.py) was measured and not kept.
GVSOC_CLUSTER = Ne16Kernels(job=568.0, tile=2137.3)


def converters(cores: int) -> int:
    """Cores that convert a tile's input (or write its im2col): all but core 0, which sets the
    tile's job up meanwhile (templates/ne16_s8.c.j2); one core does both."""
    return max(cores - 1, 1)


# oy factors of the row-job pipeline (bindings/ne16/pipeline.py): J jobs of R rows, the last of L


def _jobs(s, f, l):
    return pipeline.jobs(s).astype(np.float64)


def _bands(rows, f=None, l=None):
    """3-row bands (3×3 subtile rows) of r output rows."""
    return ((np.asarray(rows) + 2) // 3).astype(np.float64)


def _rows(rows, f=None, l=None):
    return np.asarray(rows).astype(np.float64)


def _ones(rows, f=None, l=None):
    return np.ones_like(np.asarray(rows), dtype=np.float64)


def _whole(g):
    """oy factor: g of the tile's rows (one job)."""
    return lambda s, f, l: g(np.asarray(s))


def _fill(g):
    """oy factor: g of job 0's rows (the whole tile's when it is the only job)."""
    return lambda s, f, l: g(pipeline.rows(s))   # one job: rows(s) == last_rows(s)


def _steady(s):
    """Steps of two full jobs: J - 2 (none with fewer than 2 jobs)."""
    return np.maximum(pipeline.jobs(s) - 2, 0)


def _steady_of(g):
    """oy factor: g of the J - 2 full jobs after job 0 but the last."""
    return lambda s, f, l: _steady(s) * g(pipeline.rows(s))


def _last_of(g):
    """oy factor: g of the last job while the cores requantize the one before (J ≥ 2)."""
    return lambda s, f, l: np.where(pipeline.jobs(s) > 1, g(pipeline.last_rows(s)), 0.0)


def _all_jobs(g):
    """oy factor: g summed over the tile's row jobs (J - 1 of rows(s), the last of last_rows)."""
    return lambda s, f, l: ((pipeline.jobs(s) - 1) * g(pipeline.rows(s)) +
                            g(pipeline.last_rows(s)))


def _steady_rows(s, f, l):
    return (_steady(s) * pipeline.rows(s)).astype(np.float64)


def _last_step_rows(s, f, l):
    return np.where(pipeline.jobs(s) > 1, pipeline.rows(s), 0).astype(np.float64)


def _drain(s, f, l):
    """Rows of the last job, requantized after NE16 is done."""
    return pipeline.last_rows(s).astype(np.float64)
