"""Command-line options shared by the commands that take a target (analyze, generate, validate).

`add_target_options` adds --target, --l1/--l2 (kB free after reservations, DESIGN.md), --cores,
--clock, --modules (the target restricted to some of its modules, `Target.with_modules`), --tiler,
--objective (what partition minimizes when it chooses each layer's module and kernel) and
--hypothetical (settings beyond the physical part allowed: a design study) and --acc-bits
(accumulator register width, `Module.acc_bits`: "16" for every module, "dsp=16" for one);
`target_from_args` resolves them to a `Target` value. --l1/--l2/--clock take finite positive
numbers only (`positive_number`: argparse names the option when refusing inf, nan or 0).
"""

from __future__ import annotations

import argparse
import math

from .targets.base import Target


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0 (refuses inf, nan, 0 and negatives)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number greater than 0, got {text!r}")
    return value


def add_target_options(p: argparse.ArgumentParser, required: bool = False, default: str | None = None) -> None:
    p.add_argument("--target", required=required, default=default, help="built-in target (see `tilewise targets`)")
    p.add_argument("--l1", type=positive_number, metavar="KB", help="L1 kB available to tiles, buffers and kernel scratch")
    p.add_argument("--l2", type=positive_number, metavar="KB", help="L2 kB available to activations and weights")
    p.add_argument("--cores", type=int, metavar="N", help="cores of the target's multi-core module")
    p.add_argument("--clock", type=positive_number, metavar="MHZ", help="clock frequency in MHz")
    p.add_argument("--modules", metavar="A,B", help="run only these modules of the target "
                   "(comma-separated; see `tilewise targets`)")
    p.add_argument("--tiler", default="model", choices=("model", "dory"), help="tiling search (default: model)")
    p.add_argument("--objective", default="latency", choices=("latency", "energy", "edp"),
                   help="what the choice of module and kernel per layer minimizes (default: latency)")
    p.add_argument("--acc-bits", metavar="[MODULE=]N",
                   help="accumulator bits of every module, or of one module (e.g. dsp=16 on idsp): "
                        "narrower than 32 wraps int8 conv/dense accumulators modulo 2^N in the "
                        "golden model and the C alike (seed 002 Fig. 4.6)")
    p.add_argument("--hypothetical", action="store_true",
                   help="allow --l1/--l2/--cores/--clock beyond the chip's physical resources (a "
                        "design study: reports then say 'hypothetical chip')")


def with_acc_bits(target: Target, spec: str | None) -> Target:
    """`target` with the accumulator bits of --acc-bits [MODULE=]N (None: unchanged)."""
    from .errors import TilewiseError

    if spec is None:
        return target
    module, _, bits = spec.rpartition("=")
    if not bits.strip().isdigit():
        raise TilewiseError(f"bad --acc-bits {spec!r}: expected N or MODULE=N with N a number "
                            f"of bits (8 to 32)")
    try:
        return target.with_acc_bits(int(bits), module or None)
    except (ValueError, KeyError) as e:
        why = e.args[0] if e.args else str(e)
        raise TilewiseError(f"bad --acc-bits {spec!r}: {why}") from None


def target_from_args(args: argparse.Namespace) -> Target:
    from .errors import TilewiseError
    from .targets.registry import get_target

    target = get_target(args.target, l1_kb=args.l1, l2_kb=args.l2, cores=args.cores,
                        clock_mhz=args.clock, beyond=getattr(args, "hypothetical", False))
    target = with_acc_bits(target, getattr(args, "acc_bits", None))
    if getattr(args, "modules", None) is None:
        return target
    names = [n.strip() for n in args.modules.split(",") if n.strip()]
    try:
        return target.with_modules(names)
    except ValueError as e:
        raise TilewiseError(f"bad --modules {args.modules!r}: {e}") from None
