"""Run tilewise's benchmarks: `python bench/run.py` (what `make bench` runs).

Prints the machine description and fifteen tables (host execution, memory, compile time, schedule
quality, prediction vs silicon, pulp-open firmware on GVSoC vs its prediction, stm32h7 counted
instructions vs TFLite Micro + CMSIS-NN, gap9 modules vs MATCH, diana vs MATCH, the pulp sub-byte
conv on GVSoC vs PULP-NN, the sequence and attention networks on GVSoC and the Cortex-M7, the
MLPerf Tiny models with NE16 on GVSoC by module, the Cortex-M4, gap9 with sub-byte NE16 weights
vs GreenWaves, fused chains on pulp-open's GVSoC), writes
bench/results.json, one PNG per table and the tables as Markdown (tables.md) under bench/out/.
Options pick sections and models for a quick look; the defaults are the benchmark (issue 5): every
MLPerf Tiny model, medians of 5 runs after a warm-up. A partial run (`--only`) replaces its own
tables in results.json (and bench/RESULTS.md with `--results-md`) and keeps the others, each labelled with
the commit it was measured at.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import machine, models, tables  # noqa: E402

HERE = Path(__file__).resolve().parent
SECTIONS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16")


def run(sections: tuple[str, ...], names: tuple[str, ...], runs: int, out_dir: Path,
        results: Path | None, callgrind: bool = True, plot: bool = True,
        results_md: Path | None = None) -> dict:
    started = time.perf_counter()
    desc = machine.describe()
    print("## Machine\n")
    print(machine.render(desc))
    done: list[tables.Table] = []
    timings: dict[str, float] = {}

    def emit(t: tables.Table, t0: float) -> None:
        timings[t.key] = time.perf_counter() - t0
        done.append(t)
        print(tables.render(t), flush=True)

    code_sizes = None
    if "1" in sections:
        from bench import host_exec
        t0 = time.perf_counter()
        t1, code_sizes = host_exec.measure(names, runs=runs, with_callgrind=callgrind)
        emit(t1, t0)
    if "2" in sections:
        from bench import memory_table
        t0 = time.perf_counter()
        if code_sizes is None:
            from bench import tilewise_host
            code_sizes = tilewise_host.code_sizes(names)
        emit(memory_table.measure(names, code_sizes), t0)
    if "3" in sections:
        from bench import compile_time
        t0 = time.perf_counter()
        emit(compile_time.measure(names, runs=runs), t0)
    if "4" in sections:
        from bench import schedule_quality
        t0 = time.perf_counter()
        emit(schedule_quality.measure(names), t0)
    if "5" in sections:
        from bench import silicon
        t0 = time.perf_counter()
        emit(silicon.gap9_mlperf(names), t0)
        t0 = time.perf_counter()
        emit(silicon.gap8_published(), t0)
    if "6" in sections:
        from bench import gvsoc_measure
        t0 = time.perf_counter()
        for t in gvsoc_measure.measure(names):
            emit(t, t0)
            t0 = time.perf_counter()
    if "7" in sections:
        from bench import cortex_m
        t0 = time.perf_counter()
        for t in cortex_m.measure(names):
            emit(t, t0)
            t0 = time.perf_counter()
    if "8" in sections:
        from bench import heterogeneous
        t0 = time.perf_counter()
        emit(heterogeneous.measure(names), t0)
    if "9" in sections:
        from bench import diana
        t0 = time.perf_counter()
        emit(diana.measure(names), t0)
    if "10" in sections:
        from bench import pulp_subbyte
        t0 = time.perf_counter()
        emit(pulp_subbyte.measure(), t0)
    if "11" in sections:
        from bench import sequence_attention
        t0 = time.perf_counter()
        emit(sequence_attention.measure(), t0)
    if "12" in sections:
        from bench import ne16_networks
        t0 = time.perf_counter()
        emit(ne16_networks.measure(names), t0)
    if "13" in sections:
        from bench import cortex_m4
        t0 = time.perf_counter()
        emit(cortex_m4.measure(names), t0)
    if "14" in sections:
        from bench import gap9_subbyte
        t0 = time.perf_counter()
        emit(gap9_subbyte.measure(names), t0)
    if "15" in sections:
        from bench import pulp_chains
        t0 = time.perf_counter()
        for t in pulp_chains.measure(names):
            emit(t, t0)
    if "16" in sections:
        from bench import ram_front
        t0 = time.perf_counter()
        for t in ram_front.measure(names):
            emit(t, t0)
    pngs = []
    if plot:
        from bench import plots
        pngs = [_rel(plots.plot(t, out_dir)) for t in done]
    total = time.perf_counter() - started
    out_dir.mkdir(parents=True, exist_ok=True)
    # a partial run (--only) replaces its own tables and keeps the others of the results file, each
    # with the commit it was measured at, so results.json and RESULTS.md always hold every table
    kept, measured_at, kept_seconds, kept_pngs = _previous(results, {t.key for t in done})
    commit = desc.get("commit") or "unknown"
    measured_at.update({t.key: commit for t in done})
    every = sorted([*kept, *done], key=tables.number)
    rank = {t.key: i for i, t in enumerate(every)}
    timings = dict(sorted({**kept_seconds, **timings}.items(), key=lambda kv: rank.get(kv[0], 0)))
    pngs = sorted({*kept_pngs, *pngs}, key=lambda p: rank.get(Path(p).stem, 0))
    tables_md = ("## Machine\n\n" + machine.render(desc) + "\n" + _provenance(kept, measured_at)
                 + "\n".join(tables.render(t) for t in every)
                 + f"\n_bench: {len(done)} tables in {total:.0f} s, {runs} runs per timing._\n")
    (out_dir / "tables.md").write_text(tables_md)
    if results_md is not None:
        from bench import results_md as results_page
        results_page.update(results_md, tables_md)
    doc = {"machine": desc, "runs": runs, "models": list(names), "seconds": total,
           "section_seconds": timings, "plots": pngs, "measured_at": measured_at,
           "tables": {t.key: t.to_json() for t in every}}
    if results is not None:
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(doc, indent=1, default=_jsonable) + "\n")
    print(f"bench: {len(done)} tables in {total:.0f} s" + (f"; plots in {out_dir}" if plot else "")
          + (f"; results in {results}" if results else ""))
    return doc


def _previous(results: Path | None, replaced: set[str]
              ) -> tuple[list[tables.Table], dict[str, str], dict[str, float], list[str]]:
    """What the results file holds of the tables this run did not measure: the tables, the commit
    each was measured at (older files without "measured_at": the commit of their machine line),
    their section seconds and their plots (named after the table key)."""
    if results is None or not results.is_file():
        return [], {}, {}, []
    try:
        doc = json.loads(results.read_text())
        old = doc["tables"]
        default = (doc.get("machine") or {}).get("commit") or "unknown"
        at = {k: doc.get("measured_at", {}).get(k, default) for k in old}
        seconds = dict(doc.get("section_seconds") or {})
        pngs = list(doc.get("plots") or [])
    except (ValueError, KeyError, TypeError, AttributeError):
        print(f"bench: {results} is not a results file; starting it afresh", file=sys.stderr)
        return [], {}, {}, []
    kept = [tables.Table.from_json(k, d) for k, d in old.items() if k not in replaced]
    keys = {t.key for t in kept}
    return (kept, {t.key: at[t.key] for t in kept}, {k: v for k, v in seconds.items() if k in keys},
            [p for p in pngs if Path(p).stem in keys])


def _provenance(kept: list[tables.Table], measured_at: dict[str, str]) -> str:
    """A line naming the tables that come from earlier runs (and their commits), if any."""
    if not kept:
        return ""
    by_commit: dict[str, list[str]] = {}
    for t in sorted(kept, key=tables.number):
        n, sub = tables.number(t)
        by_commit.setdefault(measured_at[t.key], []).append(f"{n}{sub}")
    parts = "; ".join(f"Table {', '.join(ns)} at {c}" for c, ns in by_commit.items())
    return f"- not rerun this time, kept from earlier runs: {parts}\n"


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(HERE.parent))
    except ValueError:
        return str(p)


def _jsonable(o):
    try:
        import numpy as np
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(SECTIONS), help="tables to run, e.g. 4,5 (default: all)")
    p.add_argument("--models", default=",".join(models.MLPERF), help="MLPerf Tiny models (default: all four)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per measurement (default 5, at least 5 "
                                                        "for published numbers)")
    p.add_argument("--out", type=Path, default=HERE / "out", help="directory for the PNG plots")
    p.add_argument("--results", type=Path, default=HERE / "results.json", help="JSON results file")
    p.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--results-md", type=Path, nargs="?", const=HERE / "RESULTS.md", default=None,
                   help="also write the tables into bench/RESULTS.md (or FILE) between its markers")
    a = p.parse_args(argv)
    sections = tuple(s.strip() for s in a.only.split(",") if s.strip())
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        p.error(f"unknown table(s) {','.join(bad)}; choose from {','.join(SECTIONS)}")
    names = tuple(n.strip() for n in a.models.split(",") if n.strip())
    unknown = [n for n in names if n not in models.MLPERF]
    if unknown:
        p.error(f"unknown model(s) {','.join(unknown)}; choose from {','.join(models.MLPERF)}")
    if a.runs < 1:
        p.error("--runs must be at least 1")
    run(sections, names, a.runs, a.out, a.results, callgrind=not a.no_callgrind, plot=not a.no_plots,
        results_md=a.results_md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
