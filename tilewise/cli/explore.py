"""`tilewise explore MODEL... --target T --l1 ... -o DIR`: a design-space sweep
(tilewise/explore)."""

from __future__ import annotations

import argparse
import sys

from .common import input_dtypes, output_dir
from .options import add_input_dtype_option


def add(sub) -> None:
    """The `explore` subcommand and its options."""
    e = sub.add_parser("explore", help="design-space sweep of hypothetical chips: latency, "
                       "energy and memory over L1/L2 sizes, cores, clocks, tilers and module "
                       "sets; CSV/JSON, plots, Pareto front, HTML")
    e.add_argument("models", nargs="+", metavar="MODEL", help=".tflite or .onnx models")
    e.add_argument("--target", required=True, help="built-in target the chips derive from")
    e.add_argument("--l1", metavar="LIST", help="kB of L1 free for tiles, comma-separated "
                   "(default: the part's)")
    e.add_argument("--l2", metavar="LIST", help="kB of L2 free, comma-separated")
    e.add_argument("--cores", metavar="LIST", help="cores of the scalable modules, comma-separated")
    e.add_argument("--clock", metavar="LIST", help="clock MHz, comma-separated")
    e.add_argument("--tiler", metavar="LIST", help="tilers, comma-separated: model, dory "
                   "(default: model)")
    e.add_argument("--modules", metavar="SETS", help="module sets, comma-separated, modules of "
                   "a set joined by '+', 'all' for every module (e.g. cluster+cpu,cpu)")
    e.add_argument("--ram-budget", metavar="LIST", help="kB of RAM (L1 arena + L2 plan peak) "
                   "the schedule may use, comma-separated: per budget the fastest schedule within "
                   "it (fused chains only where it needs them); the RAM x cycles front in "
                   "pareto_ram.png (default: the least RAM)")
    e.add_argument("--objective", default="latency", choices=("latency", "energy", "edp"),
                   help="what partition minimizes and the Pareto front's axis (default: latency)")
    e.add_argument("--measure", action="store_true", help="also run each point where the target "
                   "has a runner (pulp-open: GVSoC cycles; stm32h7: counted instructions and estimated "
                   "Cortex-M7 cycles); "
                   "slow: seconds to minutes per point")
    e.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: "
                   "CPU count)")
    e.add_argument("--cluster", metavar="tcp://HOST:PORT", help="run the points on this Dask "
                   "scheduler instead of a local pool")
    e.add_argument("-o", "--out", required=True, help="output directory (its cache/ makes a "
                   "re-run resume)")
    add_input_dtype_option(e)
    e.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    """`tilewise explore`: a design-space sweep (tilewise/explore)."""
    from ..explore import explore

    output_dir(args.out)   # an uncreatable or read-only -o: one sentence before any work
    r = explore(args.models, args.target, args.out, l1=args.l1, l2=args.l2, cores=args.cores,
                clock=args.clock, tiler=args.tiler, modules=args.modules,
                objective=args.objective, measure=args.measure, workers=args.workers,
                cluster=args.cluster, input_dtypes=input_dtypes(args, *args.models),
                ram_budget=args.ram_budget)
    s = r.stats
    ok = sum(1 for row in r.rows if row["status"] == "ok")
    print(f"tilewise: explore: {s.points} points ({s.cached} from the cache, {s.computed} "
          f"computed): {ok} predicted, {s.points - ok} could not run; wrote {r.out}/points.csv, "
          f"points.json, index.html and {len(r.plots)} plots")
    if s.errors:
        print(f"tilewise: explore: {s.errors} points hit an internal error (status 'error' in "
              f"points.json); report it", file=sys.stderr)
        return 3
    return 0
