"""Command-line options shared by the commands that take a target (analyze, generate, validate).

`add_target_options` adds --target, --l1/--l2 (kB free after reservations, DESIGN.md), --cores,
--clock, --modules (the target restricted to some of its modules, `Target.with_modules`), --tiler
and --objective (what partition minimizes when it chooses each layer's module and kernel);
`target_from_args` resolves them to a `Target` value.
"""

from __future__ import annotations

import argparse

from .targets.base import Target


def add_target_options(p: argparse.ArgumentParser, required: bool = False, default: str | None = None) -> None:
    p.add_argument("--target", required=required, default=default, help="built-in target (see `tilewise targets`)")
    p.add_argument("--l1", type=float, metavar="KB", help="L1 kB available to tiles, buffers and kernel scratch")
    p.add_argument("--l2", type=float, metavar="KB", help="L2 kB available to activations and weights")
    p.add_argument("--cores", type=int, metavar="N", help="cores of the target's multi-core module")
    p.add_argument("--clock", type=float, metavar="MHZ", help="clock frequency in MHz")
    p.add_argument("--modules", metavar="A,B", help="run only these modules of the target "
                   "(comma-separated; see `tilewise targets`)")
    p.add_argument("--tiler", default="model", choices=("model", "dory"), help="tiling search (default: model)")
    p.add_argument("--objective", default="latency", choices=("latency", "energy", "edp"),
                   help="what the choice of module and kernel per layer minimizes (default: latency)")


def target_from_args(args: argparse.Namespace) -> Target:
    from .errors import TilewiseError
    from .targets.registry import get_target

    target = get_target(args.target, l1_kb=args.l1, l2_kb=args.l2, cores=args.cores,
                        clock_mhz=args.clock)
    if getattr(args, "modules", None) is None:
        return target
    names = [n.strip() for n in args.modules.split(",") if n.strip()]
    try:
        return target.with_modules(names)
    except ValueError as e:
        raise TilewiseError(f"bad --modules {args.modules!r}: {e}") from None
