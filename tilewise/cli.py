"""The `tilewise` command line: analyze, targets, generate, validate, demo (explore joins as it lands).

Exit codes: 0 success, 1 validation mismatch, 2 bad input (one sentence on stderr, no traceback).
Set TILEWISE_DEBUG=1 to see tracebacks of internal errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .cli_options import add_target_options, target_from_args
from .errors import TilewiseError


def _cmd_analyze(args: argparse.Namespace) -> int:
    from .frontend import load_model
    from .passes import lower
    from .report.analysis import analyze_layers

    target = target_from_args(args) if args.target else None
    if target is None and (any(getattr(args, k) is not None
                               for k in ("l1", "l2", "cores", "clock", "modules"))
                           or args.objective != "latency"):
        raise TilewiseError("--l1/--l2/--cores/--clock/--modules/--objective need --target (see "
                            "`tilewise targets`)")
    if args.ablation:
        if target is None:
            raise TilewiseError("--ablation needs --target (it compares the target's module sets)")
        if args.modules is not None or args.why:
            raise TilewiseError("--ablation compares the target's own module sets: it takes "
                                "neither --modules nor --why")
    lg = lower(load_model(args.model))
    if args.ablation:
        from .report.ablation import ablation, print_ablation

        ab = ablation(lg, target, args.tiler, objective=args.objective)
        if args.json:
            print(json.dumps(ab.to_json(), indent=2))
        else:
            print_ablation(ab)
        return 0
    ns = None
    if target is not None:
        from .schedule.network import schedule_network

        ns = schedule_network(lg, target, args.tiler, objective=args.objective)
    elif args.why:
        raise TilewiseError("--why needs --target (it lists each layer's candidate modules and "
                            "kernels)")
    analysis = analyze_layers(lg, ns, why=args.why)
    if args.json:
        print(json.dumps(analysis.to_json(), indent=2))
    else:
        from .report.tables import print_analysis

        print_analysis(analysis)
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    from .report.targets_report import print_targets, targets_json

    if args.json:
        print(json.dumps(targets_json(), indent=2))
    else:
        print_targets()
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from .codegen import generate_model

    project, ns = generate_model(args.model, target_from_args(args), args.tiler, args.out,
                                 objective=args.objective)
    m = project.manifest
    print(f"tilewise: wrote {project.path} — {len(m['layers'])} layers for {m['target']} "
          f"(tiler {m['tiler']}): L1 arena {m['l1_bytes']:,} B, L2 arena {m['l2_arena_bytes']:,} B + "
          f"{m['l2_image_bytes']:,} B of constants (plan peak {m['l2_peak_bytes']:,} B), "
          + (f"{m['flash_bytes']:,} B of constants in flash, " if m["flash_bytes"] else "")
          + f"L3 image {m['l3_bytes']:,} B, "
          f"DMA {m['dma_bytes_predicted']:,} B per inference; build with `make -C {project.path}`")
    for note in ns.layers.meta.get("notes", ()):
        print(f"tilewise: note: {note}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate_path
    from .validate.text import format_report

    if args.inputs < 1:
        raise TilewiseError(f"--inputs must be at least 1, got {args.inputs}")
    report = validate_path(args.model, target_from_args(args), args.tiler, args.inputs, args.seed,
                           args.out, objective=args.objective, on=args.on)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(format_report(report))
    return 0 if report.bit_exact else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(out_dir=Path(args.out) if args.out else None)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tilewise", description="Deploy quantized networks as tiled, bit-exact C.")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="per-layer table: shapes, MACs, weights, activations")
    a.add_argument("model", help=".tflite or .onnx model")
    a.add_argument("--json", action="store_true", help="print JSON instead of tables")
    a.add_argument("--why", action="store_true", help="with --target: every layer's candidate "
                   "modules and kernels, and why each was rejected or not chosen")
    a.add_argument("--ablation", action="store_true", help="with --target: the network on each "
                   "module set the target lists (seed 003 Table IV): cycles, latency, speed-up "
                   "over the first set, layers per module")
    add_target_options(a)
    a.set_defaults(fn=_cmd_analyze)
    t = sub.add_parser("targets", help="the built-in targets and their parameters")
    t.add_argument("--json", action="store_true", help="print JSON instead of tables")
    t.set_defaults(fn=_cmd_targets)
    g = sub.add_parser("generate", help="write the tiled C project of a model for a target")
    g.add_argument("model", help=".tflite or .onnx model")
    g.add_argument("-o", "--out", required=True, help="directory of the generated project")
    add_target_options(g, required=True)
    g.set_defaults(fn=_cmd_generate)
    v = sub.add_parser("validate", help="generate, build on the host, compare bit for bit with the "
                                        "golden model and the reference runtime")
    v.add_argument("model", help=".tflite or .onnx model")
    v.add_argument("--inputs", type=int, default=20, metavar="N",
                   help="random inputs (the all-min and all-max inputs are added; default 20)")
    v.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    v.add_argument("-o", "--out", help="keep the generated project here (default: a temporary "
                                       "directory, kept only on a mismatch)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--on", choices=("host", "gvsoc", "qemu", "count"), default="host",
                   help="where the generated code runs: a host build (default); for "
                        "--target pulp-open, its firmware on GVSoC (cycles per layer measured); "
                        "for --target stm32h7, its Cortex-M7 firmware under QEMU (mps2-an500), "
                        "or under an instruction-counting emulator (count: executed instructions "
                        "per inference and per layer)")
    add_target_options(v, required=True)
    v.set_defaults(fn=_cmd_validate)
    d = sub.add_parser("demo", help="the main job on the bundled example model")
    d.add_argument("-o", "--out", help="directory for the demo's outputs (default: a temporary one)")
    d.set_defaults(fn=_cmd_demo)
    _add_explore(sub)
    return p


def _cmd_explore(args: argparse.Namespace) -> int:
    """`tilewise explore`: a design-space sweep (tilewise/explore)."""
    from .explore import explore

    r = explore(args.models, args.target, args.out, l1=args.l1, l2=args.l2, cores=args.cores,
                clock=args.clock, tiler=args.tiler, modules=args.modules,
                objective=args.objective, measure=args.measure, workers=args.workers,
                cluster=args.cluster)
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


def _add_explore(sub) -> None:
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
    e.add_argument("--objective", default="latency", choices=("latency", "energy", "edp"),
                   help="what partition minimizes and the Pareto front's axis (default: latency)")
    e.add_argument("--measure", action="store_true", help="also run each point where the target "
                   "has a runner (pulp-open: GVSoC cycles; stm32h7: counted instructions); "
                   "slow: seconds to minutes per point")
    e.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: "
                   "CPU count)")
    e.add_argument("--cluster", metavar="tcp://HOST:PORT", help="run the points on this Dask "
                   "scheduler instead of a local pool")
    e.add_argument("-o", "--out", required=True, help="output directory (its cache/ makes a "
                   "re-run resume)")
    e.set_defaults(fn=_cmd_explore)



def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args))
    except TilewiseError as e:
        print(f"tilewise: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # an internal bug: say so in one line unless debugging
        if os.environ.get("TILEWISE_DEBUG"):
            raise
        print(f"tilewise: internal error ({type(e).__name__}: {e}); rerun with TILEWISE_DEBUG=1 and report it", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
