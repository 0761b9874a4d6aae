"""`tilewise targets [--json]`: the built-in targets and their parameters."""

from __future__ import annotations

import argparse
import json


def add(sub) -> None:
    """The `targets` subcommand and its options."""
    t = sub.add_parser("targets", help="the built-in targets and their parameters")
    t.add_argument("--json", action="store_true", help="print JSON instead of tables")
    t.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..report.targets_report import print_targets, targets_json

    if args.json:
        print(json.dumps(targets_json(), indent=2))
    else:
        print_targets()
    return 0
