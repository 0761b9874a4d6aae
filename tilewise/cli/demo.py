"""`tilewise demo [-o DIR]`: the main job on the bundled example model (tilewise/demo.py)."""

from __future__ import annotations

import argparse

from .common import output_dir, removed_on_failure


def add(sub) -> None:
    """The `demo` subcommand and its options."""
    d = sub.add_parser("demo", help="the main job on the bundled example model")
    d.add_argument("-o", "--out",
                   help="directory for the demo's outputs (default: a temporary one)")
    d.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    out = output_dir(args.out) if args.out else None
    with removed_on_failure(out):
        return run_demo(out_dir=out)
