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

The 16x8 kernel (lstm16.py, tw_pulp_lstm16.c) has the same structure on words of two int16
lanes (`lanes` 2: (IP + HP) / 2 words of one x or h word, four weight words and four pv.sdotsp.h /
smlad — 8 MACs), its cell TFLM's table-based Logistic / Tanh and three Muls; on the cluster its
int16 weights stay in L2 when they take more than WEIGHTS_IN_L1 bytes, each word then costing
`l2_word` more (`l1_limit`). CLUSTER16 / ARM16 are fitted by bench/calibrate_lstm16.py.

The terms are constants of the layer's geometry (the layer runs untiled: one evaluation per
layer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir.layer import LoopNest
from ..cost_terms import Term
from .lstm import WEIGHTS_IN_L1


def _pad(n: int, m: int) -> int:
    return (int(n) + m - 1) // m * m


@dataclass(frozen=True)
class LstmCost:
    """Cycles (instructions on ARM) of tw_pulp_lstm layers (module docstring)."""

    name: str = "pulp-lstm"
    call: float = 2000.0
    step: float = 341.463
    cell: float = 2700.87
    word: float = 28.033
    #: activation lanes per dot-product word: 4 int8 (lstm_cluster_s8), 2 int16 (lstm_cluster_s16)
    lanes: int = 4
    #: the extra cost of a word whose weights stay in L2 (they take more than `l1_limit` bytes,
    #: the binding's WEIGHTS_IN_L1; 0: no limit, the weights are where the kernel reads them)
    l2_word: float = 0.0
    l1_limit: int = 0

    def for_key(self, key) -> LstmCost:
        return self

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        p = max(int(cores), 1)
        h, i = int(nest.K), int(nest.C)
        steps = int(nest.N * nest.OY * nest.OX)   # B·T rows of the output [B, T, H]
        mine = math.ceil(h / p)
        words = (_pad(i, self.lanes) + _pad(h, self.lanes)) // self.lanes
        terms = (Term(self.call, (), "call"),
                 Term(self.step * steps, (), "lstm_step"),
                 Term(self.cell * mine * steps, (), "lstm_cell"),
                 Term(self.word * words * mine * steps, (), "lstm_word"))
        if self.l1_limit <= 0:
            return terms
        in_l2 = 16 // self.lanes * h * words * self.lanes > self.l1_limit   # the weights' bytes
        return (*terms, Term(self.l2_word * words * mine * steps if in_l2 else 0.0, (), "lstm_word_l2"))


#: pulp-open's cluster on GVSoC, 8 and 1 cores together (bench/calibrate_lstm_cluster.py,
#: bench/calibration_lstm_cluster.json: `call` held at 2000; the six LSTM layers within
#: 0.885-1.163 of their measurement, the outliers the stacked model's two layers — its second one
#: computes no tanh of c (LiteRT's quirk, golden/lstm.py), which the loop nest cannot tell)
CLUSTER = LstmCost()
#: the Cortex-M7's counted instructions (the same script: `call` held at 300, `step` at 0; within
#: 0.951-1.092), the weights read in place
ARM = LstmCost(name="pulp-lstm-m7", call=300.0, step=0.0, cell=1419.839, word=43.843)

#: the 16x8 kernel (lstm16.py, tw_pulp_lstm16.c: two int16 lanes per word, four pv.sdotsp.h /
#: smlad per word of x or h), fitted by bench/calibrate_lstm16.py the same way
#: (bench/calibration_lstm16.json: six geometries, two with their weights in L2; on GVSoC, 8 and 1
#: cores, within 0.934-1.068 of the measurement; counted Cortex-M7 instructions within 0.994-1.002)
CLUSTER16 = LstmCost(name="pulp-lstm16", step=804.46, cell=1426.568, word=24.745, lanes=2, l2_word=50.825,
                     l1_limit=WEIGHTS_IN_L1)
ARM16 = LstmCost(name="pulp-lstm16-m7", call=300.0, step=0.0, cell=682.307, word=12.525, lanes=2)

__all__ = ["ARM", "ARM16", "CLUSTER", "CLUSTER16", "LstmCost"]
