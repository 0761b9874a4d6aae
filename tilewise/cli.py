"""The `tilewise` command line: analyze, targets, demo (generate/validate/explore join as they land).

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
    if target is None and any(getattr(args, k) is not None for k in ("l1", "l2", "cores", "clock")):
        raise TilewiseError("--l1/--l2/--cores/--clock need --target (see `tilewise targets`)")
    lg = lower(load_model(args.model))
    ns = None
    if target is not None:
        from .schedule.network import schedule_network

        ns = schedule_network(lg, target, args.tiler)
    analysis = analyze_layers(lg, ns)
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


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(out_dir=Path(args.out) if args.out else None)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tilewise", description="Deploy quantized networks as tiled, bit-exact C.")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="per-layer table: shapes, MACs, weights, activations")
    a.add_argument("model", help=".tflite or .onnx model")
    a.add_argument("--json", action="store_true", help="print JSON instead of tables")
    add_target_options(a)
    a.set_defaults(fn=_cmd_analyze)
    t = sub.add_parser("targets", help="the built-in targets and their parameters")
    t.add_argument("--json", action="store_true", help="print JSON instead of tables")
    t.set_defaults(fn=_cmd_targets)
    d = sub.add_parser("demo", help="the main job on the bundled example model")
    d.add_argument("-o", "--out", help="directory for the demo's outputs (default: a temporary one)")
    d.set_defaults(fn=_cmd_demo)
    return p


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
