"""The cost model of DIANA's analog core (bindings/diana_analog): cycles of one job per tile.

No public cycle model of the analog core was found (MATCH's DIANA example, eml-eda/match
`match/target/examples/diana/`, holds the digital core's model only in the copies available
here), so the model is derived from the array's structure (notes/accelerators.md, HTVM): a
1152 × 512 array of ternary cells, one output channel per column, one matrix-vector product per
output pixel, its FY·FX·C-row input window fed in and its k columns read out through the 6-bit
ADC and the digital output stage. Every coefficient is assumed:
- `job`: task set-up, dispatch and wait of one tile (the runtime's register writes), 200 cycles;
- `w_bytes_per_cycle`: the tile's k_t columns of 2-bit codes (k_t·FY·FX·C/4 bytes) written into
  the array at 8 bytes per cycle (a 64-bit port) — before the first pixel;
- `mvm`: the analog matrix-vector product and the ADC conversion of one output pixel, 12 cycles
  (all 512 columns convert in parallel);
- `x_bytes_per_cycle`: the pixel's FY·FX·C input window streamed into the array rows, 8 bytes
  per cycle;
- `y_bytes_per_cycle`: the pixel's k_t int8 outputs (after m·a6 + a >> s) written back, 8 per
  cycle.
Nothing here is measured (no DIANA simulator here): tilewise predicts, never calibrates, this
module.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.layer import LoopNest
from ..cost_terms import Term, ident, per_image


@dataclass(frozen=True)
class AnalogKernels:
    """Cycles of the analog core per tile (module docstring; every figure assumed)."""

    name: str = "diana-analog"
    job: float = 200.0
    w_bytes_per_cycle: float = 8.0
    mvm: float = 12.0
    x_bytes_per_cycle: float = 8.0
    y_bytes_per_cycle: float = 8.0

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        taps = nest.FY * nest.FX
        pix = (("oy", ident), ("ox", ident))
        terms = (Term(self.job, (), "job"),
                 Term(taps / 4 / self.w_bytes_per_cycle, (("k", ident), ("c", ident)), "weights"),
                 Term(self.mvm, pix, "mvm"),
                 Term(taps / self.x_bytes_per_cycle, (*pix, ("c", ident)), "input"),
                 Term(1 / self.y_bytes_per_cycle, (*pix, ("k", ident)), "output"))
        return per_image(terms)
