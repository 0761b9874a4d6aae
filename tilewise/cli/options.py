"""Command-line options shared by the commands that take a target (analyze, generate, validate).

`add_target_options` adds --target, --l1/--l2 (kB free after reservations, DESIGN.md), --cores,
--clock, --modules (the target restricted to some of its modules, `Target.with_modules`), --tiler,
--objective (what partition minimizes when it chooses each layer's module and kernel) and
--hypothetical (settings beyond the physical part allowed: a design study), --acc-bits
(accumulator register width, `Module.acc_bits`: "16" for every module, "dsp=16" for one) and
--ram-budget (kB of RAM the schedule may use: the fastest schedule within it, pipeline.py;
`ram_budget` gives the bytes);
`target_from_args` resolves them to a `Target` value. --l1/--l2/--clock take finite positive
numbers only (`positive_number`: argparse names the option when refusing inf, nan or 0).

`add_input_dtype_option` adds --input-dtype [NAME=]DTYPE[,…] (analyze, generate, validate,
explore): the code type of integer exports' float32 / wide-integer inputs (frontend/__init__.py
`load_model`'s `input_dtypes`); `input_dtypes_from_args` parses it, a bad value one sentence.
"""

from __future__ import annotations

import argparse
import math
import re

from ..targets.base import Target


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0 (refuses inf, nan, 0 and negatives); thousands
    separators as tilewise prints them ("1,344.0") are taken."""
    try:
        value = float(text.replace(",", "") if re.fullmatch(r"\s*\d{1,3}(,\d{3})+(\.\d*)?\s*", text)
                      else text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number greater than 0, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0 (--seed: numpy's generators take no negative seed)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {text!r}")
    return value


def add_target_options(p: argparse.ArgumentParser, required: bool = False, default: str | None = None) -> None:
    p.add_argument("--target", required=required, default=default, help="built-in target (see `tilewise targets`)")
    p.add_argument("--l1", type=positive_number, metavar="KB",
                   help="L1 kB available to tiles, buffers and kernel scratch")
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
    p.add_argument("--ram-budget", type=positive_number, metavar="KB",
                   help="RAM (L1 arena + L2 plan peak) the schedule may use: the fastest schedule "
                        "within it; fused chains only where the budget needs them (default: the "
                        "least RAM the fused chains reach)")
    p.add_argument("--hypothetical", action="store_true",
                   help="allow --l1/--l2/--cores/--clock beyond the chip's physical resources (a "
                        "design study: reports then say 'hypothetical chip')")


def ram_budget(args: argparse.Namespace) -> int | None:
    """--ram-budget in bytes (None: not given)."""
    kb = getattr(args, "ram_budget", None)
    return None if kb is None else int(kb * 1024)


def with_acc_bits(target: Target, spec: str | None) -> Target:
    """`target` with the accumulator bits of --acc-bits [MODULE=]N (None: unchanged)."""
    from ..errors import TilewiseError

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
    from ..errors import TilewiseError
    from ..targets.registry import get_target

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


#: the code types an integer export's input container may hold (frontend/onnx_lower.py)
INPUT_DTYPES = ("int8", "uint8", "int16", "int32")


def add_input_dtype_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-dtype", metavar="[NAME=]DTYPE[,...]",
                   help="the code type of an integer export's (NEMO, QuantLab, Deeploy) inputs "
                        "held in float32 or wide integer containers: int8, uint8, int16 or int32, "
                        "for every such input or NAME=DTYPE for one (default: uint8 for float32, "
                        "the container's width for integers; validate --data/--golden infers it "
                        "from the data)")


def parse_input_dtypes(text: str | None) -> dict[str, str] | None:
    """--input-dtype [NAME=]DTYPE[,...] → {NAME or "*": DTYPE}; None when not given. A bad value
    is one sentence (TilewiseError, exit 2)."""
    from ..errors import TilewiseError

    if text is None:
        return None
    out: dict[str, str] = {}
    for item in text.split(","):
        name, _, dtype = item.strip().rpartition("=")
        name, dtype = name.strip() or "*", dtype.strip()
        if not dtype:
            raise TilewiseError(f"bad --input-dtype {text!r}: give DTYPE or NAME=DTYPE, "
                                f"comma-separated, without empty items (DTYPE one of "
                                f"{', '.join(INPUT_DTYPES)})")
        if dtype not in INPUT_DTYPES:
            raise TilewiseError(f"bad --input-dtype {text!r}: '{dtype}' is not one of "
                                f"{', '.join(INPUT_DTYPES)}")
        if name in out:
            raise TilewiseError(f"bad --input-dtype {text!r}: "
                                f"{'every input' if name == '*' else repr(name)} is given twice")
        out[name] = dtype
    return out


def check_input_dtypes(graph, dtypes: dict[str, str] | None) -> None:
    """Every NAME of --input-dtype names an input of the model whose container leaves its code
    type open (one sentence otherwise)."""
    from ..errors import TilewiseError
    from ..validate.data import container_inputs

    named = [n for n in (dtypes or {}) if n != "*"]
    if not named:
        return
    conts = [e["onnx"] for e in container_inputs(graph)]
    for n in named:
        if n not in conts:
            inputs = [e["onnx"] for e in graph.meta.get("onnx_inputs", ())] or list(graph.inputs)
            raise TilewiseError(
                f"bad --input-dtype: '{n}' is not an input of {graph.source or graph.name} whose "
                f"container (float32, int32, int64) holds integer codes"
                + (f" (those are {', '.join(conts)})" if conts else
                   f" (it has none; its inputs are {', '.join(inputs)})"))
