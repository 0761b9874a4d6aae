"""`tilewise ops [--target T] [--json]`: the operators each frontend accepts; with a target, the
modules and kernels that run each op and their precisions (report/ops.py)."""

from __future__ import annotations

import argparse
import json


def add(sub) -> None:
    """The `ops` subcommand and its options."""
    o = sub.add_parser("ops", help="the operators each frontend accepts; with --target, the "
                                   "modules and kernels that run each op and their precisions")
    o.add_argument("--target", help="built-in target (see `tilewise targets`)")
    o.add_argument("--json", action="store_true", help="print JSON instead of text")
    o.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..report.ops import ops_json, ops_text
    from ..targets.registry import get_target

    target = get_target(args.target) if args.target else None
    print(json.dumps(ops_json(target), indent=2) if args.json else ops_text(target))
    return 0
