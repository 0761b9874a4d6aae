"""The cost model of the pulp family's LSTM (bindings/pulp/lstm.py, c/tw_pulp_lstm.c): `LstmCost`,
fitted by bench/calibrate_lstm_cluster.py on GVSoC pulp-open cycles (8 and 1 cores: CLUSTER) and on
counted Cortex-M7 instructions (ARM).

Structure (tw_pulp_lstm): the layer forks the cores once and each core copies its cells' biases
and, on the cluster, weights into L1 (`call`: the copies of the largest layers fitted, 6.7 kB of
weights over the cores, are a few thousand cycles of millions); then per time step (B·T of them)
one barrier and core 0's copy of the next input row (`step`), and the busiest core's ⌈H/P⌉ cells
each cost `cell` (the eight accumulators set from the biases, eight rescales into Q3.12,
tw_lstm_cell's three sigmoids, two tanh, the update and the new h) plus `word` per step of its
two 4x1 dot-product blocks ((IP + HP) / 4 of them: one input word, four weight words, four
sdotp4 — 16 MACs).

The terms are constants of the layer's geometry (the layer runs untiled: one evaluation per
layer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir.layer import LoopNest
from ..cost_terms import Term


def _pad4(n: int) -> int:
    return (int(n) + 3) // 4 * 4


@dataclass(frozen=True)
class LstmCost:
    """Cycles (instructions on ARM) of tw_pulp_lstm layers (module docstring)."""

    name: str = "pulp-lstm"
    call: float = 2000.0
    step: float = 341.463
    cell: float = 2700.87
    word: float = 28.033

    def for_key(self, key) -> LstmCost:
        return self

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        p = max(int(cores), 1)
        h, i = int(nest.K), int(nest.C)
        steps = int(nest.N * nest.OY * nest.OX)   # B·T rows of the output [B, T, H]
        mine = math.ceil(h / p)
        words = (_pad4(i) + _pad4(h)) // 4
        return (Term(self.call, (), "call"),
                Term(self.step * steps, (), "lstm_step"),
                Term(self.cell * mine * steps, (), "lstm_cell"),
                Term(self.word * words * mine * steps, (), "lstm_word"))


#: pulp-open's cluster on GVSoC, 8 and 1 cores together (bench/calibrate_lstm_cluster.py,
#: bench/calibration_lstm_cluster.json: `call` held at 2000; the six LSTM layers within
#: 0.885-1.163 of their measurement, the outliers the stacked model's two layers — its second one
#: computes no tanh of c (LiteRT's quirk, golden/lstm.py), which the loop nest cannot tell)
CLUSTER = LstmCost()
#: the Cortex-M7's counted instructions (the same script: `call` held at 300, `step` at 0; within
#: 0.951-1.092), the weights read in place
ARM = LstmCost(name="pulp-lstm-m7", call=300.0, step=0.0, cell=1419.839, word=43.843)

__all__ = ["ARM", "CLUSTER", "LstmCost"]
