"""Table 1 — host execution: generated C vs TFLM vs LiteRT on the same inputs, one core.

Per model and per round, each engine runs n inferences back to back on the benchmark input (n chosen
once so a round takes ~`round_s` seconds per engine) and reports time per inference:
- tilewise: the generated C built with gcc -O2 into bench's own timing harness, one core, timed
  inside the program with clock_gettime (tilewise_host);
- TFLM `invoke()` and LiteRT (XNNPACK, num_threads=1) `invoke()`, timed from Python (peers).
The engines run in rotating order inside a round; ratios are taken round by round and their median
reported (stats). Outputs are compared: tilewise vs TFLM must be bit-exact (both are int8 TFLite
reference semantics); LiteRT's XNNPACK may differ by a code and is only reported.
Instructions per inference (callgrind, deterministic): the generated binary, and TFLM as a Python
process doing n invokes minus one doing none (callgrind.per_inference).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import callgrind, models, peers, stats, tilewise_host
from .tables import Table

CALLGRIND_N = 3


def _calibrate(time_fn: Callable[[int], float], round_s: float, n_max: int = 200_000) -> int:
    """Warm up and pick n so that n inferences take about round_s seconds."""
    t = time_fn(1)
    t = min(t, time_fn(max(1, int(0.05 / max(t, 1e-9)))))
    return max(3, min(n_max, math.ceil(round_s / max(t, 1e-9))))


def _instructions(jobs: dict[tuple[str, str], Callable[[], float]]) -> dict[tuple[str, str], float | str]:
    """Run the callgrind jobs two at a time (deterministic counts: parallelism does not bias them)."""
    out: dict[tuple[str, str], float | str] = {}
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = {k: ex.submit(fn) for k, fn in jobs.items()}
        for k, f in futs.items():
            try:
                out[k] = f.result()
            except Exception as e:  # reported in the table, never silently dropped
                out[k] = f"failed ({type(e).__name__}: {str(e).splitlines()[0][:120]})"
    return out


def measure(names: Sequence[str] = models.MLPERF, runs: int = 5, round_s: float = 0.25,
            with_callgrind: bool = True) -> tuple[Table, dict]:
    """Table 1 and the generated code sizes per model (for table 2)."""
    gen_reason = tilewise_host.unavailable_reason()
    rows, data, code_sizes = [], {}, {}
    cg_jobs: dict[tuple[str, str], Callable[[], float]] = {}
    builds: dict[str, tilewise_host.HostBuild] = {}
    for name in names:
        path = models.model_path(name)
        engines: dict[str, object] = {"tflm": peers.TflmRunner(path, name),
                                      "litert": peers.LiteRtRunner(path, name)}
        if gen_reason is None:
            b = tilewise_host.build(name, engines["tflm"].input)  # type: ignore[attr-defined]
            builds[name] = b
            engines = {"tilewise": b, **engines}
            code_sizes[name] = b.code_size()
        else:
            code_sizes[name] = f"n/a ({gen_reason})"
        n = {k: _calibrate(e.time, round_s) for k, e in engines.items()}  # type: ignore[attr-defined]
        times: dict[str, list[float]] = {k: [] for k in engines}
        order = list(engines)
        for r in range(runs):
            for k in order[r % len(order):] + order[:r % len(order)]:
                times[k].append(engines[k].time(n[k]))  # type: ignore[attr-defined]
        outs = {k: e.output() for k, e in engines.items()}  # type: ignore[attr-defined]
        d: dict = {"n_per_round": n, "seconds": times}
        ms = {k: stats.median(v) * 1e3 for k, v in times.items()}
        if "tilewise" in engines:
            tw_out = np.asarray(outs["tilewise"]).reshape(-1)
            d["bitexact_vs_tflm"] = bool(np.array_equal(tw_out, outs["tflm"].reshape(-1)))
            d["max_diff_vs_litert"] = int(np.max(np.abs(tw_out.astype(int) - outs["litert"].reshape(-1).astype(int))))
            d["ratio_tflm"] = stats.run_ratios(times["tilewise"], times["tflm"])
            d["ratio_litert"] = stats.run_ratios(times["tilewise"], times["litert"])
            r_tflm, r_lite = stats.median(d["ratio_tflm"]), stats.median(d["ratio_litert"])
            tw_ms: float | str = ms["tilewise"]
            exact: object = d["bitexact_vs_tflm"]
        else:
            r_tflm = r_lite = tw_ms = exact = f"n/a ({gen_reason})"
        d["ms"] = ms
        data[name] = d
        if with_callgrind and callgrind.available():
            cg_jobs[(name, "tflm")] = (lambda nm=name: callgrind.per_inference(
                lambda k: peers.tflm_invoke_command(nm, k), CALLGRIND_N))
            if name in builds:
                cg_jobs[(name, "tilewise")] = (lambda b=builds[name]: callgrind.per_inference(
                    b.command, CALLGRIND_N))
        rows.append([name, tw_ms, ms["tflm"], ms["litert"], r_tflm, r_lite, exact])
    cg_note = "valgrind not installed" if not callgrind.available() else "callgrind skipped"
    instr = _instructions(cg_jobs) if cg_jobs else {}
    for row in rows:
        name = row[0]
        for eng in ("tilewise", "tflm"):
            v = instr.get((name, eng))
            if v is None:
                v = f"n/a ({gen_reason})" if eng == "tilewise" and gen_reason else f"n/a ({cg_note})"
            data[name][f"instr_{eng}"] = v
            row.append(round(v) if isinstance(v, float) else v)
    for b in builds.values():
        b.cleanup()
    table = Table(
        "host", f"Table 1 — host execution, one core (ms per inference, median of {runs} rounds)",
        ("model", "tilewise C", "TFLM", "LiteRT", "tilewise / TFLM", "tilewise / LiteRT",
         "bit-exact vs TFLM", "tilewise instr/inf", "TFLM instr/inf"),
        tuple(tuple(r) for r in rows),
        notes=("tilewise C: generated project + host HAL (1 core; the host HAL checks every DMA — garbage "
               "fill and source hash — as in validation) built with gcc -O2 into bench/harness/bench_main.c, "
               "input in memory, n inferences per round timed inside the program (clock_gettime).",
               "TFLM: tflite-micro Python interpreter invoke(); LiteRT: ai_edge_litert Interpreter, default "
               "resolver (XNNPACK), num_threads=1; both timed from Python (includes ~1 µs of call overhead).",
               "Ratios: computed round by round (same round for all engines), median reported.",
               f"instr/inf: valgrind callgrind; tilewise = (binary with {CALLGRIND_N} inferences − with 0) / "
               f"{CALLGRIND_N}; TFLM = (Python process with {CALLGRIND_N} invokes − with 0) / {CALLGRIND_N}, "
               "both after one warm-up inference."),
        data=data,
    )
    return table, code_sizes
