"""The cost model of the pulp family's row-wise integer ops and transpose on the cluster
(bindings/pulp/rows.py, c/tw_pulp_rows.c): `RowsCost`, fitted on GVSoC pulp-open cycles of the
Deeploy exports' layers on 8 and 1 cores (bench/calibrate_rows.py, bench/calibration_rows.json).

Structure (tw_pulp_rows): the layer forks the cores once (`call`); per block of B rows (rows.py
block_rows) core 0 waits for the block's input, issues the next block's input and, after the
compute, this block's output (`block`: two DMA programmings, two barriers, the waits — the
cluster's 644-cycle transfer programming dominates); the cores split each block's rows
(tw_pulp_share: the busiest core has ⌈n/P⌉ of a block's n rows) and each row costs `row[op]`
(the kernel's per-row work: the maximum / mean scans' set-up, the integer square root, the
division of ITAMax) plus `elem[op]` per element (the tw_int.h kernel's loops over the row, its
64-bit arithmetic). The first block's input and the last one's output are not hidden behind
compute: their bytes at the DMA's `bytes_per_cycle`.

Reduce (tw_pulp_reduce): `r_call` and the bytes in and out at `bytes_per_cycle`, then the
busiest core's ⌈outputs/P⌉ outputs of `count` input elements each at `r_elem`.

Transpose (tw_pulp_transpose): `t_call`, the whole input in and the whole output out by DMA (two
programmings `t_dma` and the bytes at `bytes_per_cycle`, not overlapped), then the busiest
core's share of the elements, ⌈n/P⌉, at `t_elem` each (its rows' odometer steps taken into
the element: the loop nest does not say how the permutation merges the dims).

The terms are constants of the layer's geometry (the layer runs untiled: one evaluation per
layer), so no factor needs to be separable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...ir.layer import LoopNest
from ..cost_terms import Term
from .rows import block_rows, geometry

#: the ops the model prices per element and per row (rows.py's table)
ROW_OPS = ("layer_norm", "rms_norm", "int_softmax", "ita_max", "int_gelu", "hardswish", "requant")


@dataclass(frozen=True)
class RowsCost:
    """Cycles of tw_pulp_rows / tw_pulp_transpose layers (module docstring)."""

    name: str = "pulp-rows"
    #: per element, by op (the kernel's loops on L1 rows, one core), fitted
    #: (bench/calibration_rows.json; the softmax's rows there are 2 long: its per-row work is in
    #: its element)
    elem: tuple[tuple[str, float], ...] = (
        ("layer_norm", 123.399), ("rms_norm", 98.296), ("int_softmax", 305.099), ("ita_max", 43.057),
        ("int_gelu", 49.042), ("hardswish", 36.131), ("requant", 54.194))
    #: per row, by op: not fitted — each op's measured layers have rows of one length, which
    #: cannot tell a row's cost from its elements' (bench/calibrate_rows.py fits it where they
    #: differ); assumed from the loops: the norms' integer square root (31 steps of 64-bit
    #: compares and shifts) and three scans' set-up, the softmax's and ITAMax's two scans and a
    #: division; 0 for the elementwise ops, whose rows are their elements
    row: tuple[tuple[str, float], ...] = (
        ("layer_norm", 1500.0), ("rms_norm", 1500.0), ("int_softmax", 300.0), ("ita_max", 400.0),
        ("int_gelu", 0.0), ("hardswish", 0.0), ("requant", 0.0))
    #: per layer (the fork, the first wait) and per block (two DMA programmings, two barriers,
    #: the waits), fitted
    call: float = 575.975
    block: float = 2169.044
    #: the DMA's bytes per cycle (targets/pulp_open.py's L1 figure)
    bytes_per_cycle: float = 14.5
    #: transpose: per layer (fork, both DMA programmings and waits: fitted together, `t_dma` 0)
    #: and per element of the busiest core, fitted
    t_call: float = 1893.675
    t_dma: float = 0.0
    t_elem: float = 8.408
    #: reduce (tw_pulp_reduce): per layer (fork, both DMA programmings and waits) and per input
    #: element of the busiest core's outputs; fitted on ICCT's one IntegerMean on 8 and 1 cores
    #: (two layers for two coefficients: not a test of the structure)
    r_call: float = 2343.35
    r_elem: float = 26.468
    #: the op this copy prices (for_key); "transpose" for the transpose
    op: str = ""
    #: the layer's element bits (the requant's and hardswish's input may be 16 / 32)
    x_bits: int = 8

    def for_key(self, key) -> RowsCost:
        return replace(self, op=str(key.op), x_bits=key.precision.x)

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        p = max(int(cores), 1)
        rows, length, xb, yb = geometry(nest, self.op)
        if self.op == "reduce":
            n_in = nest.N * nest.IY * nest.IX * nest.C
            outs = nest.N * nest.OY * nest.OX * nest.K
            count = n_in // max(outs, 1)
            return (Term(self.r_call + (n_in * xb + outs * yb) / self.bytes_per_cycle, (), "call"),
                    Term(self.r_elem * math.ceil(outs / p) * count, (), "r_elem"))
        if self.op == "transpose":
            n = rows * length
            return (Term(self.t_call, (), "call"),
                    Term(self.t_dma + 2 * n * xb / self.bytes_per_cycle, (), "dma"),
                    Term(self.t_elem * math.ceil(n / p), (), "t_elem"))
        return self.row_terms(rows, length, xb, yb, p, self.op)

    def row_terms(self, rows: int, length: int, xb: int, yb: int, p: int, op: str) -> tuple[Term, ...]:
        b = max(block_rows(rows, length, xb, yb), 1)
        full, last = divmod(rows, b)
        core_rows = full * math.ceil(b / p) + math.ceil(last / p)
        blocks = full + (1 if last else 0)
        edge = (min(b, rows) * length * xb + (last or b) * length * yb) / self.bytes_per_cycle
        return (Term(self.call, (), "call"),
                Term(self.block * blocks + edge, (), "block"),
                Term(dict(self.row)[op] * core_rows, (), "row"),
                Term(dict(self.elem)[op] * core_rows * length, (), "elem"))


__all__ = ["ROW_OPS", "RowsCost"]
