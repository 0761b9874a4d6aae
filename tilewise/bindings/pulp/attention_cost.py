"""The cost model of the cluster's depth-first attention (attention.py, templates/attention.c.j2):
the busiest core's cycles, in the terms of the kernels it calls.

An attention of H heads, m rows of q, reduction d, L keys and dv context columns, in tiles of r
rows (attention.m_tile) on P cores:
- per tile, the scores MatMul of r rows (k = d, n = L) and the context MatMul (k = L, n = dv):
  the MatMul of two activations' own block terms (cost.py MatMulActCost: 4x4 blocks of the
  uniform requantization when the tile has a row quad per core, else 4x2 blocks, k's byte
  leftovers), with its fitted coefficients;
- per tile, the row op on the busiest core's ⌈r/P⌉ rows of L: a per-row and a per-element
  coefficient of that op (`row_costs`), fitted here (rows_cost.RowsCost's were fitted on rows of
  one length, which cannot separate the two);
- per head, kᵀ and vᵀ built by the cores (MatMulActCost.transpose per value of a core's columns);
- DMA bytes at the MatMul's `dma` cycles per byte (blocking: core 0 waits for each transfer);
- fixed parts, fitted on GVSoC (bench/calibrate_attention.py): `call` (the fork, the words'
  transfers), `head` (two staged transfers, four barriers), `tile` (q's transfer, the output's,
  three or four barriers).
Terms are constants of the nest (the layer is untiled), as the row ops' (rows_cost.py).
Built for Arm (`arm`: one Cortex-M7 core, counted instructions, the MatMul's Arm coefficients
MM_ACT_M7, no DMA), fitted on the instruction counter (ATTENTION_M7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ...ir.layer import LoopNest
from ..cost_terms import Term
from .cost import MM_ACT_M7, MatMulActCost


@dataclass(frozen=True)
class AttentionCost:
    """Cycles of attention.py layers (module docstring)."""

    name: str = "pulp-attention"
    arm: bool = False
    mm: MatMulActCost = field(default_factory=MatMulActCost)
    #: the row op this copy prices (with_rows): "int_softmax", "ita_max" or None
    row: str | None = None
    # RI5CY on GVSoC pulp-open (bench/calibration_attention.json): the fixed parts (module
    # docstring) and per row op its cycles per row and per element of the busiest core
    call: float = 3400.4364
    head: float = 3054.3345
    tile: float = 1546.5376
    softmax_row: float = 542.3499
    softmax_elem: float = 358.4202
    ita_max_row: float = 60.3909
    ita_max_elem: float = 51.534

    def with_rows(self, row: str | None) -> AttentionCost:
        return replace(self, row=row)

    def _mm(self, r: int, k: int, n: int, p: int) -> float:
        """One tile's MatMul of r rows (k reduction, n columns): MatMulActCost's block terms."""
        m = self.mm
        quads, pairs = m.shares(r, k, n, 1, p)
        k4, blocks = math.ceil(k / 4), math.ceil(n / 4)
        tail = 1.0 if k % 4 else 0.0
        return blocks * (quads * (m.step4 * k4 + m.block4) + pairs * (m.step * k4 + m.block + m.tail * tail))

    def parts(self, nest: LoopNest, cores: int) -> dict[str, float]:
        """The predicted cycles by part (module docstring)."""
        from .attention import nest_geometry

        p = max(int(cores), 1)
        g = nest_geometry(nest, self.row is not None, self.arm)
        full, last = divmod(g.m, g.m_tile)
        tiles = [g.m_tile] * full + ([last] if last else [])
        mm = sum(self._mm(r, g.d, g.keys, p) + self._mm(r, g.keys, g.dv, p) for r in tiles)
        rows = 0.0
        if self.row is not None:
            row, elem = ((self.softmax_row, self.softmax_elem) if self.row == "int_softmax"
                         else (self.ita_max_row, self.ita_max_elem))
            per = row + elem * g.keys
            rows = sum(math.ceil(r / p) * per for r in tiles)
        transpose = self.mm.transpose * (g.d * math.ceil(g.keys / p) + g.keys * math.ceil(g.dv / p))
        dma = 0.0 if self.arm else self.mm.dma * (g.d * g.keys + g.keys * g.dv + g.m * (g.d + g.dv))
        return {"call": self.call, "head": g.heads * (self.head + transpose + dma),
                "tile": g.heads * len(tiles) * self.tile, "matmul": g.heads * mm, "rows": g.heads * rows}

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        return tuple(Term(v, (), k) for k, v in self.parts(nest, cores).items())

    #: the coefficients a calibration fits (bench/calibrate_attention.py)
    COEFFICIENTS = ("call", "head", "tile", "softmax_row", "softmax_elem", "ita_max_row", "ita_max_elem")


#: built for Arm, in executed Cortex-M7 instructions (bench/calibration_attention.json
#: "cortex_m7_instructions"; stm32h7's module)
ATTENTION_M7 = AttentionCost(name="pulp-attention-m7", arm=True, mm=MM_ACT_M7, call=9557.1228, head=0.0,
                             tile=8476.6003, softmax_row=0.0, softmax_elem=297.3647, ita_max_row=0.0,
                             ita_max_elem=77.0654)

__all__ = ["ATTENTION_M7", "AttentionCost"]
