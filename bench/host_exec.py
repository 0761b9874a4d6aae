"""Table 1 — host execution: generated C vs TFLM vs LiteRT on the same inputs, one core.

Per model and per round, each engine runs n inferences back to back on the benchmark input (n chosen
once so a round takes ~`round_s` seconds per engine) and reports time per inference:
- tilewise: the generated C built with gcc -O2 into bench's own timing harness, one core, timed
  inside the program with clock_gettime (tilewise_host);
- TFLM `invoke()` and LiteRT (XNNPACK, num_threads=1) `invoke()`, timed from Python (peers).
The engines run in rotating order inside a round; ratios are taken round by round and their median
reported (stats). Outputs are checked: each engine's output after the timed rounds must equal its
first output (an engine clobbering its own input would be timing garbage), and every engine is held
against the int8 reference (LiteRT BUILTIN_REF): tilewise must match it bit for bit (its golden
contract); TFLM's and XNNPACK's kernels may round differently, and their largest difference is shown.
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

#: inferences of the generated binary under callgrind (its counts are deterministic)
CALLGRIND_N = 3
#: TFLM under callgrind: a Python process's start-up is not instruction-deterministic, so the
#: invoke count is chosen to execute about this many instructions, swamping that noise
TFLM_CG_INSTR = 1e9
#: TFLM instructions per second of invoke on x86 (only to choose that count; ~15-20 measured)
TFLM_INSTR_PER_S = 1.7e10
#: sources of the host HAL (DMA emulation: a pthread-locked pending table, copies at wait)
HAL_FILES = {"tw_hal_host.c"}


def _count(v: object) -> object:
    return round(v) if isinstance(v, float) else v


def _maxdiff(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.max(np.abs(a.astype(np.int64) - b.astype(np.int64)))) if a.size else 0


def _calibrate(time_fn: Callable[[int], float], round_s: float, n_max: int = 200_000) -> int:
    """Warm up and pick n so that n inferences take about round_s seconds."""
    t = time_fn(1)
    t = min(t, time_fn(max(1, int(0.05 / max(t, 1e-9)))))
    return max(3, min(n_max, math.ceil(round_s / max(t, 1e-9))))


def _instructions(jobs: dict[tuple[str, str], Callable[[], object]]) -> dict[tuple[str, str], object]:
    """Run the callgrind jobs two at a time (deterministic counts: parallelism does not bias them)."""
    out: dict[tuple[str, str], object] = {}
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
    unavailable = tilewise_host.unavailable_reason()
    reasons: dict[str, str | None] = {}
    rows, data, code_sizes = [], {}, {}
    cg_jobs: dict[tuple[str, str], Callable[[], object]] = {}
    builds: dict[str, tilewise_host.HostBuild] = {}
    for name in names:
        path = models.model_path(name)
        engines: dict[str, object] = {"tflm": peers.TflmRunner(path, name),
                                      "litert": peers.LiteRtRunner(path, name)}
        gen_reason = reasons[name] = unavailable
        if gen_reason is None:
            try:
                b = tilewise_host.build(name, engines["tflm"].input)  # type: ignore[attr-defined]
            except Exception as e:  # shown in the table: a model tilewise cannot build yet
                gen_reason = reasons[name] = f"build failed: {str(e).strip().splitlines()[0][:160]}"
            else:
                builds[name] = b
                engines = {"tilewise": b, **engines}
                code_sizes[name] = b.code_size()
        if gen_reason is not None:
            code_sizes[name] = f"n/a ({gen_reason})"
        n = {k: _calibrate(e.time, round_s) for k, e in engines.items()}  # type: ignore[attr-defined]
        times: dict[str, list[float]] = {k: [] for k in engines}
        order = list(engines)
        for r in range(runs):
            for k in order[r % len(order):] + order[:r % len(order)]:
                times[k].append(engines[k].time(n[k]))  # type: ignore[attr-defined]
        outs = {k: np.asarray(e.output()).reshape(-1) for k, e in engines.items()}  # type: ignore[attr-defined]
        for k, e in engines.items():  # an engine that corrupted its own input would be timing garbage
            if not np.array_equal(outs[k], np.asarray(e.first).reshape(-1)):  # type: ignore[attr-defined]
                raise RuntimeError(f"{name}: {k}'s output changed over the timed rounds")
        ref = peers.reference_output(path, name).reshape(-1)
        d: dict = {"n_per_round": n, "seconds": times,
                   "max_diff_vs_reference": {k: _maxdiff(o, ref) for k, o in outs.items()}}
        ms = {k: stats.median(v) * 1e3 for k, v in times.items()}
        if "tilewise" in engines:
            d["ratio_tflm"] = stats.run_ratios(times["tilewise"], times["tflm"])
            d["ratio_litert"] = stats.run_ratios(times["tilewise"], times["litert"])
            r_tflm, r_lite = stats.median(d["ratio_tflm"]), stats.median(d["ratio_litert"])
            tw_ms: float | str = ms["tilewise"]
            exact: object = bool(np.array_equal(outs["tilewise"], ref))
        else:
            r_tflm = r_lite = tw_ms = exact = f"n/a ({gen_reason})"
        diffs = "/".join(str(d["max_diff_vs_reference"][k]) for k in ("tflm", "litert"))
        d["ms"] = ms
        data[name] = d
        if with_callgrind and callgrind.available():
            n_tflm = max(CALLGRIND_N, min(500, math.ceil(TFLM_CG_INSTR / (ms["tflm"] * 1e-3 * TFLM_INSTR_PER_S))))
            d["callgrind_invokes"] = {"tilewise": CALLGRIND_N, "tflm": n_tflm}
            cg_jobs[(name, "tflm")] = (lambda nm=name, k_=n_tflm: callgrind.per_inference(
                lambda k: peers.tflm_invoke_command(nm, k), k_))
            if name in builds:
                cg_jobs[(name, "tilewise")] = (lambda b=builds[name]: callgrind.per_inference_share(
                    b.command, CALLGRIND_N, HAL_FILES))
        rows.append([name, tw_ms, ms["tflm"], ms["litert"], r_tflm, r_lite, exact, diffs])
    cg_note = "valgrind not installed" if not callgrind.available() else "callgrind skipped"
    instr = _instructions(cg_jobs) if cg_jobs else {}
    for row in rows:
        name = row[0]
        tw = instr.get((name, "tilewise"))
        if tw is None:
            tw = f"n/a ({reasons[name]})" if reasons[name] else f"n/a ({cg_note})"
        tw_instr, hal = (tw if isinstance(tw, tuple) else (tw, tw))
        tf = instr.get((name, "tflm"), f"n/a ({cg_note})")
        data[name].update({"instr_tilewise": tw_instr, "hal_share_tilewise": hal, "instr_tflm": tf})
        row += [_count(tw_instr), 100.0 * hal if isinstance(hal, float) else hal, _count(tf)]
    for b in builds.values():
        b.cleanup()
    table = Table(
        "host", f"Table 1 — host execution, one core (ms per inference, median of {runs} rounds)",
        ("model", "tilewise C", "TFLM", "LiteRT", "tilewise / TFLM", "tilewise / LiteRT",
         "tilewise = reference", "max Δ TFLM/LiteRT vs ref. (codes)", "tilewise instr/inf",
         "of which host HAL %", "TFLM instr/inf"),
        tuple(tuple(r) for r in rows),
        notes=("tilewise C: generated project + host HAL (1 core, built -DTW_HAL_HOST_UNCHECKED: transfers "
               "still complete at their wait, without validation's garbage fill and source hashing) built "
               "with gcc -O2 into bench/harness/bench_main.c, "
               "input in memory, n inferences per round timed inside the program (clock_gettime).",
               "TFLM: tflite-micro Python interpreter invoke(); LiteRT: ai_edge_litert Interpreter, default "
               "resolver (XNNPACK), num_threads=1; both timed from Python (the time includes the Python call of "
               "invoke()).",
               "TFLM reuses its input tensor's arena bytes, so each TFLM inference is set_input + invoke; LiteRT "
               "keeps its input, so it is invoke alone. Every engine's output after the timed rounds is checked "
               "equal to its first output.",
               "Ratios: computed round by round (same round for all engines), median reported.",
               "reference = LiteRT with its reference kernels (BUILTIN_REF), the bit-exact contract of tilewise's "
               "golden model; 'tilewise = reference' is the generated C's output on the benchmark input; the "
               "peers' columns give their largest difference from it in int8 codes.",
               f"instr/inf: valgrind callgrind; tilewise = (binary with {CALLGRIND_N} inferences − with 0) / "
               f"{CALLGRIND_N}; TFLM = (Python process with N set_input+invoke − with 0) / N, N chosen per model "
               "so the invokes dominate the Python start-up's run-to-run variation (N in results.json); "
               "both after one warm-up inference. 'of which host HAL %': share of tilewise's instructions executed "
               "in tw_hal_host.c (DMA emulation; the copies themselves run in libc "
               "memcpy and are not counted there)."),
        data=data,
    )
    return table, code_sizes
