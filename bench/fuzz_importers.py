"""Fuzz the TFLite and ONNX importers for a long run (issue 25): `python bench/fuzz_importers.py
--budget 3000`.

Each case mutates a shipped model (bench/fuzzing: byte-level or field-level) and runs
`tilewise analyze` on it in a worker process limited to --seconds per case and --memory-mb of
address space (one worker: the machines are shared). Case i of an importer is made by
random.Random(f"{seed}:{importer}:{i}"), so `--only onnx:1234` re-makes and re-runs one case
(`--keep DIR` writes it out). Every --target-every-th case also schedules the model
(`--target gap8`, under --target-seconds: scheduling an unmutated vww_mobilenet takes 4-11 s
on a loaded 2-core machine), the rest stop after lowering and the per-layer table (10 s).

Prints one table (importer, files mutated, ok, exit 2, exit 3, memory, hangs, crashes, max RSS,
slowest case without and with --target) and writes it with every bug found (seed model, case, mutation, error) to
bench/fuzz_importers.json. Exit 1 when any case is a bug (exit 3, memory, hang, crash).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fuzzing.mutators import IMPORTERS, SUFFIX, make_case  # noqa: E402
from bench.fuzzing.seeds import seed_files  # noqa: E402
from bench.fuzzing.worker import BUGS, Limits, Runner  # noqa: E402
from bench.models import models_dir  # noqa: E402
from bench.tables import Table, render  # noqa: E402

HERE = Path(__file__).resolve().parent
KINDS = ("ok", "exit2", "exit3", "memory", "hang", "crash")


def case_rng(seed: int, importer: str, i: int) -> random.Random:
    return random.Random(f"{seed}:{importer}:{i}")


def fuzz(importer: str, seeds: list[tuple[str, bytes]], runner: Runner, indices: range | list[int],
         seed: int, target_every: int, keep: Path | None, target_seconds: float = 60.0,
         progress: bool = True) -> dict:
    """Run the cases `indices` of one importer; returns its counts, bugs and resource figures."""
    counts = dict.fromkeys(KINDS, 0)
    bugs, max_rss, slowest, slowest_case, slowest_target, started = [], 0, 0.0, "", 0.0, time.perf_counter()
    for n, i in enumerate(indices, 1):
        name, data, note = make_case(importer, seeds, case_rng(seed, importer, i))
        extra = ("--target", "gap8") if target_every and i % target_every == 0 else ()
        out = runner.run(data, SUFFIX[importer], extra, target_seconds if extra else None)
        counts[out.kind] += 1
        max_rss = max(max_rss, out.max_rss_kb)
        if extra:
            slowest_target = max(slowest_target, out.seconds)
        elif out.seconds > slowest:
            slowest, slowest_case = out.seconds, f"{importer}:{i} ({name}: {note})"
        if out.bug:
            bugs.append({"case": f"{importer}:{i}", "seed_model": name, "mutation": note, "kind": out.kind,
                         "args": list(extra), "error": out.message, "seconds": round(out.seconds, 2)})
            print(f"  {out.kind}: {importer}:{i} {name}: {note}\n    {out.message}", flush=True)
        if keep is not None and (out.bug or len(indices) == 1):
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"{importer}_{i}{SUFFIX[importer]}").write_bytes(data)
        if progress and n % 250 == 0:
            print(f"  {importer}: {n}/{len(indices)} cases, {time.perf_counter() - started:.0f} s, "
                  f"{sum(counts[k] for k in BUGS)} bugs", flush=True)
    return {"files_mutated": len(indices), **counts, "max_rss_mb": round(max_rss / 1024, 1),
            "slowest_case_s": round(slowest, 2), "slowest_case": slowest_case,
            "slowest_target_case_s": round(slowest_target, 2), "seconds": round(time.perf_counter() - started, 1),
            "seed_models": len(seeds), "bugs": bugs}


def table(results: dict[str, dict], limits: Limits, target_every: int, target_seconds: float) -> Table:
    cols = ("importer", "files mutated", "ok", "exit 2", "exit 3", "memory", "hangs", "crashes",
            "max RSS (MB)", "slowest case (s)", "slowest --target case (s)")
    rows = tuple((imp, r["files_mutated"], r["ok"], r["exit2"], r["exit3"], r["memory"], r["hang"], r["crash"],
                  r["max_rss_mb"], r["slowest_case_s"], r["slowest_target_case_s"]) for imp, r in results.items())
    notes = (f"each case: `tilewise analyze` in one worker process, {limits.seconds:g} s and "
             f"{limits.memory_mb} MB of address space (RLIMIT_AS) at most; a case past the time is a hang, "
             "a MemoryError under the cap is 'memory'",
             f"every {target_every}th case also with `--target gap8` (scheduling), limited to {target_seconds:g} s"
             if target_every else "no case scheduled (--target-every 0)")
    return Table("fuzz_importers", "Importers fuzzed: mutated shipped models through `tilewise analyze`",
                 cols, rows, notes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, default=3000, help="mutated files per importer (default 3000)")
    ap.add_argument("--importers", default=",".join(IMPORTERS), help="comma-separated: tflite,onnx")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=10.0, help="time limit per case (default 10)")
    ap.add_argument("--memory-mb", type=int, default=2048, help="worker address space (default 2048)")
    ap.add_argument("--target-every", type=int, default=10,
                    help="every N-th case also runs with --target gap8 (0: never; default 10)")
    ap.add_argument("--target-seconds", type=float, default=60.0,
                    help="time limit of the --target cases, which schedule the whole network (default 60)")
    ap.add_argument("--models", type=Path, default=models_dir())
    ap.add_argument("--only", metavar="IMPORTER:CASE", help="re-run one case (e.g. onnx:1234)")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="write the bug cases' mutated files here")
    ap.add_argument("--json", type=Path, default=HERE / "fuzz_importers.json")
    args = ap.parse_args(argv)

    limits = Limits(args.seconds, args.memory_mb)
    plan = {imp: range(args.budget) for imp in args.importers.split(",")}
    if args.only:
        imp, i = args.only.split(":")
        plan = {imp: [int(i)]}
    results: dict[str, dict] = {}
    with Runner(limits) as runner:
        for imp, indices in plan.items():
            files = seed_files(args.models, imp)
            if not files:
                print(f"no {imp} models under {args.models}", file=sys.stderr)
                return 2
            seeds = [(str(f.relative_to(args.models) if f.is_relative_to(args.models) else f.name), f.read_bytes())
                     for f in files]
            print(f"{imp}: {len(indices)} cases from {len(seeds)} seed models", flush=True)
            results[imp] = fuzz(imp, seeds, runner, indices, args.seed, args.target_every, args.keep,
                                args.target_seconds)
    t = table(results, limits, args.target_every, args.target_seconds)
    print()
    print(render(t))
    if not args.only:
        args.json.write_text(json.dumps({"seed": args.seed, "seconds_limit": limits.seconds,
                                         "memory_mb_limit": limits.memory_mb, "target_every": args.target_every,
                                         "target_seconds_limit": args.target_seconds,
                                         "table": t.to_json(), "importers": results}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 1 if any(r[k] for r in results.values() for k in BUGS) else 0


if __name__ == "__main__":
    sys.exit(main())
