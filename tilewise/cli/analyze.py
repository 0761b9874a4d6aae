"""`tilewise analyze MODEL [--target T]`: the per-layer table (shapes, MACs, weights, module, tiles,
L1/L2 use, predicted cycles) as a table, CSV or JSON; --why, --ablation, --code-size, --report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import TilewiseError
from .common import add_report_option, input_dtypes
from .options import add_input_dtype_option, add_target_options, ram_budget, target_from_args
from .paths import check_report_destination


def add(sub) -> None:
    """The `analyze` subcommand and its options."""
    a = sub.add_parser("analyze", help="per-layer table: shapes, MACs, weights, activations")
    a.add_argument("model", help=".tflite or .onnx model")
    a.add_argument("--json", action="store_true", help="print JSON instead of tables")
    fmt = a.add_mutually_exclusive_group()
    fmt.add_argument("--wide", action="store_true", help="every column of the table (the default "
                     "set fits 100 columns)")
    fmt.add_argument("--csv", action="store_true", help="print the table as CSV: every column, "
                     "one row per layer, a header row")
    add_report_option(a, "the analysis")
    a.add_argument("--why", action="store_true", help="with --target: every layer's candidate "
                   "modules and kernels, and why each was rejected or not chosen")
    a.add_argument("--ablation", action="store_true", help="with --target: the network on each "
                   "module set the target lists (seed 003 Table IV): cycles, latency, speed-up "
                   "over the first set, layers per module")
    a.add_argument("--code-size", action="store_true", help="with --target stm32h7 or "
                   "pulp-open: build the network's firmware and count its code in flash (the "
                   "linked network, layers, kernels and HAL)")
    a.add_argument("--layer-by-layer", action="store_true", help="with --target: keep each "
                   "attention's MatMuls and softmax as separate layers instead of one depth-first "
                   "layer, and each residual add apart from its conv (to compare their memory "
                   "and cycles)")
    add_target_options(a)
    add_input_dtype_option(a)
    a.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..pipeline import Options, load, lower, schedule_network
    from ..report.analysis import analyze_layers

    check_report_destination(args.report)   # before any work (paths.py)
    target = target_from_args(args) if args.target else None
    if target is None and (any(getattr(args, k) is not None
                               for k in ("l1", "l2", "cores", "clock", "modules", "acc_bits"))
                           or args.objective != "latency"):
        raise TilewiseError("--l1/--l2/--cores/--clock/--modules/--objective/--acc-bits need "
                            "--target (see `tilewise targets`)")
    if args.ablation:
        if target is None:
            raise TilewiseError("--ablation needs --target (it compares the target's module sets)")
        if args.modules is not None or args.why:
            raise TilewiseError("--ablation compares the target's own module sets: it takes "
                                "neither --modules nor --why")
    lg = lower(load(args.model, Options(input_dtypes=input_dtypes(args, args.model) or {})))
    if args.ablation:
        from ..report.ablation import ablation, print_ablation

        ab = ablation(lg, target, args.tiler, objective=args.objective)
        if args.json:
            print(json.dumps(ab.to_json(), indent=2))
        else:
            print_ablation(ab)
        return 0
    ns = None
    if target is not None:
        ns = schedule_network(lg, target, args.tiler, objective=args.objective,
                              depth_first=not args.layer_by_layer, ram_budget=ram_budget(args))
    elif args.why:
        raise TilewiseError("--why needs --target (it lists each layer's candidate modules and "
                            "kernels)")
    code = None
    if args.code_size:
        if ns is None:
            raise TilewiseError("--code-size needs --target (it builds the target's firmware)")
        from ..validate.code_size import measure

        code = measure(ns, Path(args.model).name)
    analysis = analyze_layers(ns.layers if ns is not None else lg, ns, why=args.why, code=code)
    _analyze_report(args, analysis, ns, target)
    if args.json:
        print(json.dumps(analysis.to_json(), indent=2))
    elif args.csv:
        from ..report.tables import write_csv

        write_csv(analysis, sys.stdout)
    else:
        from ..report.tables import print_analysis

        print_analysis(analysis, wide=args.wide)
    return 0


def _analyze_report(args: argparse.Namespace, analysis, ns, target) -> None:
    """`analyze --report DIR`: report.json / .txt / .html of the analysis (report/report_files)."""
    if args.report is None:
        return
    from ..report.report_files import build_report, write_report

    path = write_report(args.report, build_report("analyze", analysis, ns, target))
    print(f"tilewise: wrote the report to {path}", file=sys.stderr)
