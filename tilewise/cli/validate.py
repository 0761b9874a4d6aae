"""`tilewise validate MODEL --target T`: generate, build, run and compare bit for bit on random
inputs (validate/check.py) or on the user's own data (data.py: --data, --golden ...)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..codegen.owned import check_out_dir
from ..errors import TilewiseError
from .common import (
    add_force_option,
    add_name_option,
    add_report_option,
    c_name,
    input_dtypes,
    output_dir,
    project_report,
    removed_on_failure,
)
from .data import add_data_options, data_requested, validate_data_from_args
from .options import add_input_dtype_option, add_target_options, non_negative_int, ram_budget, target_from_args
from .paths import check_file_destination, check_report_destination

#: validate --inputs N at most (random inputs)
MAX_INPUTS = 100_000


def add(sub) -> None:
    """The `validate` subcommand and its options."""
    v = sub.add_parser("validate", help="generate, build on the host, compare bit for bit with the "
                                        "golden model and the reference runtime")
    v.add_argument("model", help=".tflite or .onnx model")
    v.add_argument("--inputs", type=int, default=20, metavar="N",
                   help="random inputs (the all-min and all-max inputs are added; default 20)")
    v.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the random inputs (0 or more)")
    v.add_argument("-o", "--out", help="keep the generated project here (default: a temporary "
                                       "directory, kept only on a mismatch)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--on", choices=("host", "gvsoc", "qemu", "count"), default="host",
                   help="where the generated code runs: a host build (default); for "
                        "--target pulp-open, its firmware on GVSoC (cycles per layer measured); "
                        "for --target stm32h7 / stm32l4r5, its Cortex-M7 / M4 firmware under QEMU "
                        "(mps2-an500 / mps2-an386), "
                        "or under an instruction-counting emulator (count: executed instructions "
                        "per inference and per layer, and the Cortex-M7 timing model's estimated "
                        "cycles)")
    add_data_options(v)
    add_target_options(v, required=True)
    add_report_option(v, "the validation (one is also written to <project>/report when the "
                          "project is kept)")
    add_name_option(v)
    add_force_option(v)
    add_input_dtype_option(v)
    v.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from ..validate import validate_path
    from ..validate.text import format_report

    if args.inputs < 1:
        raise TilewiseError(f"--inputs must be at least 1, got {args.inputs}")
    if args.inputs > MAX_INPUTS:   # 1e9 would run silently for days
        raise TilewiseError(f"--inputs {args.inputs:,}: at most {MAX_INPUTS:,} random inputs (each "
                            f"runs through the C and the golden model: {MAX_INPUTS:,} already take "
                            f"hours); give a smaller N, or your own inputs with --data")
    out = output_dir(args.out) if args.out else None
    if out is not None:
        check_out_dir(out, f"-o {args.out}", args.force)
    check_report_destination(args.report)   # the destinations before minutes of work
    check_file_destination(args.layer_csv, "--layer-csv")
    check_file_destination(args.metrics_csv, "--metrics-csv")
    target = target_from_args(args)
    dtypes = input_dtypes(args, args.model)
    with removed_on_failure(out):
        if data_requested(args):   # validation on the user's own data (data.py)
            report = validate_data_from_args(args, target, out, c_name(args), dtypes)
        else:
            report = validate_path(args.model, target, args.tiler, args.inputs, args.seed,
                                   out, objective=args.objective, on=args.on,
                                   c_name=c_name(args), input_dtypes=dtypes,
                                   ram_budget=ram_budget(args))
    _validate_report(args, report)
    if args.json:
        print(json.dumps({**report.to_json(), **({"hypothetical": True} if target.hypothetical
                                                 else {})}, indent=2))
    else:
        print(format_report(report))
        if target.hypothetical:
            print(f"hypothetical chip: settings beyond the physical {target.name} (--hypothetical)")
    return 0 if report.bit_exact else 1


def _validate_report(args: argparse.Namespace, report) -> None:
    """validate: the report (table and plots of the schedule the generated C executes), written
    when the project is kept or --report is given."""
    project = Path(report.project) if Path(report.project).is_dir() else None
    if project is None and args.report is None:
        return
    project_report(args, "validate", report.schedule, project, report)
