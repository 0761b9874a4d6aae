"""The cost model of the pulp family's SVDF on the cluster (bindings/pulp/svdf.py,
c/tw_pulp_svdf.c): `SvdfCost`, fitted by bench/calibrate_svdf.py on GVSoC pulp-open cycles
(8 cores).

Structure (tw_pulp_svdf): one fork, core 0's transfers in and out (`call`, and `dma` per byte
moved), then per batch row two barriers (`row`) and the busiest core's ⌈F/P⌉ filters — each the
shift of its M − 1 state values (`shift` per value), the feature product (`fmac` per MAC of C) and
its requantization into the state (`filter`) — and ⌈U/P⌉ units — each rank·M time MACs (`tmac`)
and the output requantization (`unit`). Constants of the layer's geometry (the layer runs
untiled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir.layer import LoopNest
from ..cost_terms import Term


@dataclass(frozen=True)
class SvdfCost:
    """Cycles of tw_pulp_svdf layers (module docstring)."""

    name: str = "pulp-svdf"
    # pulp-open's 8 cores on GVSoC (bench/calibration_svdf.json "cluster": 11 geometries within
    # 0.995-1.007); `dma`, `row` and `shift` came out 0: the transfers, barriers and the state's
    # shift hide in `call`, `filter` and `tmac` (the shift is M − 1 moves per filter, tmac M MACs)
    call: float = 6022.7925
    dma: float = 0.0
    row: float = 0.0
    shift: float = 0.0
    fmac: float = 10.7363
    filter: float = 103.1693
    tmac: float = 26.4693
    unit: float = 69.6617

    def for_key(self, key) -> SvdfCost:
        return self

    def parts(self, nest: LoopNest, cores: int) -> dict[str, float]:
        from .svdf import geometry

        p = max(int(cores), 1)
        g = geometry(nest)
        b, c, f, m, u, r = g["batch"], g["inputs"], g["filters"], g["memory"], g["units"], g["rank"]
        moved = f * c + 2 * f * m + 4 * u + 4 * b * f * m + b * c + b * u
        mf, mu = math.ceil(f / p), math.ceil(u / p)
        return {"call": self.call + self.dma * moved, "row": self.row * b,
                "filters": b * mf * (self.shift * (m - 1) + self.fmac * c + self.filter),
                "units": b * mu * (self.tmac * r * m + self.unit)}

    def terms(self, nest: LoopNest, cores: int) -> tuple[Term, ...]:
        return tuple(Term(v, (), k) for k, v in self.parts(nest, cores).items())

    #: the coefficients bench/calibrate_svdf.py fits (`row` and `shift` stay 0: with one batch row
    #: and F·M time MACs per shifted value the measurements cannot tell them from `call` and
    #: `tmac`, which carry them)
    COEFFICIENTS = ("call", "dma", "fmac", "filter", "tmac", "unit")


CLUSTER = SvdfCost()

__all__ = ["CLUSTER", "SvdfCost"]
