"""The whole of `tilewise explore`: grid → checks → points (cached, local or Dask) → Pareto →
CSV/JSON, plots, HTML in the output directory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import TilewiseError
from .cache import Cache
from .grid import Point, build_grid
from .outputs import write_csv, write_json
from .pareto import mark_pareto
from .runner import RunStats, run_points


@dataclass(frozen=True)
class SweepResult:
    rows: list[dict]
    stats: RunStats
    out: Path
    plots: tuple[str, ...]


def check_grid(points: Sequence[Point]) -> None:
    """Refuse, before any point runs, what no point of the grid could take: an unknown target,
    an override the target has no use for (--cores on a single-core part), an unknown module,
    an unreadable model, --objective energy/edp on a target without energy figures (each one
    sentence, exit 2)."""
    from .point import lowered, point_target

    seen: set = set()
    for p in points:
        k = (p.l1_kb, p.l2_kb, p.cores, p.clock_mhz, p.modules)
        if k not in seen:
            seen.add(k)
            t = point_target(p)
            unknown = [m.name for m in t.modules if m.pj_per_cycle <= 0]
            if p.objective != "latency" and unknown:
                raise TilewiseError(f"--objective {p.objective} needs energy figures, and target "
                                    f"{t.name} has none for module(s) {', '.join(unknown)}; use "
                                    f"--objective latency")
    for p in {p.model_sha: p for p in points}.values():
        lowered(p.model, p.model_sha, p.input_dtypes)  # once here: forked workers inherit it


def explore(models: Sequence[str | Path], target: str, out_dir: str | Path, *,
            l1: str | None = None, l2: str | None = None, cores: str | None = None,
            clock: str | None = None, tiler: str | None = None, modules: str | None = None,
            objective: str = "latency", measure: bool = False, workers: int | None = None,
            cluster: str | None = None, progress: bool | None = None,
            input_dtypes: dict[str, str] | None = None, ram_budget: str | None = None
            ) -> SweepResult:
    if workers is not None and workers < 1:   # before the cache folder is made
        raise TilewiseError(f"--workers must be at least 1, got {workers}")
    points = build_grid(models, target, l1=l1, l2=l2, cores=cores, clock=clock, tiler=tiler,
                        modules=modules, objective=objective, measure=measure,
                        input_dtypes=input_dtypes, ram_budget=ram_budget)
    check_grid(points)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TilewiseError(f"-o {out}: exists and is not a directory")
    rows, stats = run_points(points, Cache(out), workers=workers, cluster=cluster,
                             progress=progress)
    mark_pareto(rows, objective)
    meta = {"target": target, "models": [str(m) for m in models], "l1": l1, "l2": l2,
            "cores": cores, "clock": clock, "tiler": tiler or "model", "modules": modules or "all",
            "objective": objective, "measure": measure, "ram_budget": ram_budget}
    write_json(rows, out / "points.json", meta)
    write_csv(rows, out / "points.csv")
    from .html import write_html
    from .plots import write_plots

    plots = write_plots(rows, out)
    write_html(rows, plots, meta, out / "index.html")
    return SweepResult(rows, stats, out, tuple(plots))
