"""The cost model of the diana_digital bindings (bindings/diana_digital): the digital core's job
plus the host core's share of a tile (programming the job, requantizing the int32 output).

The core's cycles follow MATCH's DIANA digital model (eml-eda/match `match/target/examples/
diana/digital/cost_model.py`, `def_innermost_loops_cost`; notes/match-cost-model.md): for an L1
tile with K output channels, OY rows, OX columns, C input channels, Σ over the padding row
classes pad = 0, 1, … of
    ⌈K·rows(pad)·OX / 256⌉ · (C·(FY − pad)·FX + 2·C·(FY − pad) + 23)
where rows(pad) is the number of output rows whose window loses `pad` kernel rows to padding
(rows(0): the rows whose window is whole): 1 cycle per input read, per MAC and per output write,
23 per output for requant and store (seed 003 §V). MATCH takes the layer's padding p as
symmetric and counts two rows (top, bottom) per class 1..p, right at stride 1; the core pads per
side (bindings/diana_digital/arith.py), so here the classes are the rows the core does pad
(`padded_rows`): on top, output row o loses max(0, p_top − S·o) kernel rows, at the bottom
max(0, S·o − p_top + FY − IY) — equal to MATCH's at stride 1 with symmetric padding, one class
(one row, 1 kernel row) for TFLite's stride-2 'SAME' (0 on top, 1 at the bottom, 3×3), and none
at the bottom of a symmetric stride-2 layer whose last window ends on the input. Written as
separable terms (bindings/cost_terms.py), the 256-wide array is the 16 output channels × 16 output
columns it is (MATCH's spatial mapping K 16, OX 16): ⌈K/16⌉·⌈OX/16⌉ per row instead of
⌈K·rows·OX/256⌉ — equal when K and OX are multiples of 16, never lower; and a tile only has the
padded rows of its own border: the first oy tile the top ones, the last the bottom ones (`rows`
per tile below), so that the sum over a layer's tiles is the whole-layer figure.
- depthwise: the layer runs as a conv of one input channel with 4 rows per channel (each
  channel followed by 3 zero rows in the weight layout, arith.py), so K rows = 4·channels:
  ⌈4·k/16⌉ and C = 1;
- dense: a 1×1 map, C inputs: ⌈K/16⌉ · (3·C + 23).
- add (bindings/diana_digital/add.py): the formula with C = FY = FX = 1 — per 16 channels × 16
  columns of a row, 1 + 2 (the two addends read) + 23 = 26 cycles: how ZigZag sees an
  elementwise layer (no reduction loop); assumed, MATCH states no figure for DIANA's add.
The host core (a RISC-V core, RI5CY-class — assumed, targets/diana.py) per tile programs the job
(`job`, assumed: set-up, dispatch and the wait's poll) and, for the int32-output bindings,
requantizes every output (`requant` per output: the pulp kernels' per-mode figures fitted on
GVSoC's RI5CY, bindings/pulp/cost.py, assumed for the portable tw_requant the host runs),
blocking: the core waits for the host and the host for the core. No figure here is measured.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...ir.layer import LoopNest
from ..cost_terms import Term, ceil_div, ident, per_image


def padded_rows(nest: LoopNest) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The kernel rows each padded output row loses: (top rows from the first, bottom rows from
    the last), zeros left out (module docstring)."""
    s, fy, top = nest.SY, nest.FY, nest.pads[0]
    rows = range(nest.OY)
    upper = tuple(top - s * o for o in rows if top - s * o > 0)
    lower = tuple(s * o - top + fy - nest.IY for o in reversed(rows)
                  if s * o - top + fy - nest.IY > 0)
    return upper, lower


def _body_rows(upper: int, lower: int):
    """Rows of an oy tile whose window is whole: its size less the padded rows it holds."""
    def f(s, first, last):
        return np.maximum(s - upper * np.asarray(first, np.float64)
                          - lower * np.asarray(last, np.float64), 0.0)
    return f


def _border_rows(upper: int, lower: int):
    """Rows of an oy tile losing a given number of kernel rows: `upper` of them on the first
    tile, `lower` on the last."""
    def f(s, first, last):
        return (upper * np.asarray(first, np.float64) + lower * np.asarray(last, np.float64)
                + 0.0 * s)
    return f


@dataclass(frozen=True)
class DianaDigitalKernels:
    """The digital core's cycles per tile and the host core's per-tile work (module docstring)."""

    name: str = "diana-digital"
    per_output: float = 23.0         # requant and store per output (MATCH)
    job: float = 200.0               # host: job set-up, dispatch, wait per tile (assumed)
    requant: float = 20.4            # host, per output (pulp model requant_tflite; for_key)
    #: the core requantizes (the *_rq bindings): no host pass
    core_requant: bool = False

    def for_key(self, key) -> DianaDigitalKernels:
        """The model of one binding: the host's requantization of its mode."""
        return replace(self, requant={"onnx": 1049.0, "shift": 12.0}.get(key.mode, 20.4))

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        fy, fx = nest.FY, nest.FX
        if nest.kind == "dwconv":
            c, k = 1, ("k", ceil_div(4))              # ⌈4·k / 16⌉
        elif nest.kind == "add":
            c, k, fy, fx = 1, ("k", ceil_div(16)), 1, 1
        else:
            c, k = nest.C, ("k", ceil_div(16))
        cols = ("ox", ceil_div(16))

        def step(pad: int) -> float:
            return c * (fy - pad) * fx + 2 * c * (fy - pad) + self.per_output

        upper, lower = padded_rows(nest)
        core = [Term(step(0), (k, ("oy", _body_rows(len(upper), len(lower))), cols), "core")]
        core += [Term(step(pad), (k, ("oy", _border_rows(upper.count(pad), lower.count(pad))),
                                  cols), f"core_pad{pad}")
                 for pad in sorted(set(upper) | set(lower))]
        host = [Term(self.job, (), "job")]
        if not self.core_requant:
            host.append(Term(self.requant, (("oy", ident), ("ox", ident), ("k", ident)),
                             "requant"))
        return per_image((*core, *host))
