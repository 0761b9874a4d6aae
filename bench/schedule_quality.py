"""Table 4 — schedule quality: predicted cycles of `--tiler model` vs `--tiler dory` on gap8.

Both tilers search the same schedule space and are costed by the same cost model (DESIGN.md
"Scheduling"); the dory tiler reproduces seed 001's CP-SAT objective (memory occupancy plus its
heuristics), the model tiler minimizes predicted latency. At L1 64 kB and 16 kB (free for tiles,
`--l1`), the ratio model/dory < 1 is what the latency objective buys; a tiler that cannot fit a
layer is reported as such, not dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilewise.errors import TilewiseError

from . import models, scheduling
from .tables import Table

L1_KB = (None, 16)   # None: the part's own free L1


def measure(names: Sequence[str] = models.MLPERF, l1s: Sequence[int] = L1_KB) -> Table:
    rows = []
    data: dict = {}
    for name in names:
        lg = scheduling.lowered(models.model_path(name))
        for l1 in l1s:
            tgt = scheduling.target("gap8", l1_kb=l1)
            l1 = round(tgt.memory("L1").free / 1024, 1)
            cyc: dict[str, float | str] = {}
            for tiler in scheduling.TILERS:
                try:
                    cyc[tiler] = float(scheduling.schedule(lg, tgt, tiler).cycles)
                except TilewiseError as e:
                    cyc[tiler] = f"does not fit ({e})"
            ok = all(isinstance(v, float) for v in cyc.values())
            ratio = cyc["model"] / cyc["dory"] if ok else None  # type: ignore[operator]
            data.setdefault(name, {})[str(l1)] = {**cyc, "ratio": ratio}
            rows.append((name, l1, *(cyc[t] for t in scheduling.TILERS), ratio))
    g8 = scheduling.target("gap8")
    return Table(
        "schedule_quality", f"Table 4 — schedule quality on gap8 (predicted cycles, "
                            f"{g8.module('cluster').cores} cores, {g8.clock_mhz:g} MHz)",
        ("model", "L1 kB", "cycles --tiler model", "cycles --tiler dory", "model / dory"),
        tuple(rows),
        notes=("Predicted by tilewise's gap8 cost model for both tilers (same space, same cost model); "
               "L1 kB = bytes free for tiles, buffers and im2col (`--l1`): GAP8's own (64 kB less "
               "the core stacks) and 16 kB.",),
        data=data,
    )
