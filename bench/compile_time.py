"""Table 3 — compile time: analyze and analyze+generate wall time per model with each tiler.

analyze = `load_model` + `lower` + `schedule_network` on gap8 (what `tilewise analyze MODEL
--target gap8 --tiler T` computes before printing); analyze + generate =
`tilewise.codegen.generate_model` (the whole of `tilewise generate MODEL --target gap8 --tiler T
-o DIR`: load, lower, schedule, write the C project), when code generation is available. Wall
times in one process, median of `runs` after one warm-up (imports and first-call costs excluded);
the two are measured alternately, round by round, so a busy moment of the machine hits both.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tilewise.frontend import load_model
from tilewise.passes import lower

from . import models, scheduling, stats, tilewise_host
from .tables import Table

TARGET = "gap8"


def _analyze(path: Path, tiler: str) -> None:
    scheduling.schedule(lower(load_model(path)), scheduling.target(TARGET), tiler)


def _generate(path: Path, tiler: str) -> None:
    from tilewise.codegen import generate_model

    with tempfile.TemporaryDirectory(prefix="tw_bench_gen_") as d:
        generate_model(path, scheduling.target(TARGET), tiler, Path(d) / "out")


def measure(names: Sequence[str] = models.MLPERF, runs: int = 5) -> Table:
    reason = tilewise_host.unavailable_reason()
    na = f"n/a ({reason})"
    rows, data = [], {}
    for name in names:
        path = models.model_path(name)
        for tiler in scheduling.TILERS:
            fns = [lambda: _analyze(path, tiler)]
            if reason is None:
                fns.append(lambda: _generate(path, tiler))
            times = stats.interleaved_wall_times(fns, runs)
            ana, gen = times[0], (times[1] if reason is None else None)
            data.setdefault(name, {})[tiler] = {"analyze_s": ana, "analyze_generate_s": gen}
            rows.append((name, tiler, stats.median(ana) * 1e3,
                         stats.median(gen) * 1e3 if gen else na))
    return Table(
        "compile_time", f"Table 3 — compile time on {TARGET} (ms, median of {runs} after a warm-up)",
        ("model", "tiler", "analyze ms", "analyze + generate ms"),
        tuple(rows),
        notes=("analyze = load + lower + schedule_network (tiles, L3 tiling, L2 plan); analyze + generate = "
               "tilewise.codegen.generate_model (what `tilewise generate` runs: everything up to the written C "
               "project); wall time on the machine above.",),
        data=data,
    )
