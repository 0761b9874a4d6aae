"""The `tilewise` command line: analyze, targets, ops, generate, validate, explore, quantize, demo.

Exit codes: 0 success, 1 validation mismatch, 2 bad input (one sentence on stderr, no traceback),
130 interrupted (Ctrl-C; temporary directories removed), 141 stdout closed early (`| head`: quiet,
as a C tool killed by SIGPIPE). Set TILEWISE_DEBUG=1 to see tracebacks of internal errors.

Output directories (-o) are made absolute where the CLI receives them (the compiler runs in the
project directory, so a caller-relative path would name the wrong place) and checked before any
work: an existing file, or a place that cannot be created or written, is bad input; a directory
the command created is removed again when the command fails.
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from .cli_data import add_data_options, data_requested, validate_data_from_args
from .cli_options import (add_input_dtype_option, add_target_options, check_input_dtypes,
                          non_negative_int, parse_input_dtypes, target_from_args)
from .cli_parser import Parser, UsageError
from .cli_paths import check_file_destination, check_report_destination
from .codegen.owned import check_out_dir
from .errors import TilewiseError
from .tempdirs import remove_tree


def output_dir(path: str) -> Path:
    """The absolute path of an -o directory, refused (TilewiseError) when it names an existing
    file or a place that cannot be created or written; nothing is left behind by the check."""
    p = Path(path).expanduser().absolute()
    if p.exists() and not p.is_dir():
        raise TilewiseError(f"-o {path}: names an existing file, not a directory")
    parent = p
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise TilewiseError(f"-o {path}: cannot create a directory there, {parent} is a file")
    try:   # a probe: access() says yes to root on a read-only mount and on a mode-555 directory
        os.rmdir(tempfile.mkdtemp(prefix=".tilewise_probe_", dir=parent))
    except OSError as e:
        where = "is not writable" if parent == p else f"cannot be created in {parent}"
        raise TilewiseError(f"-o {path}: {where} ({e.strerror or e}); give -o a place you can "
                            f"write to") from None
    return p


@contextlib.contextmanager
def removed_on_failure(path: Path | None) -> Iterator[None]:
    """Remove `path` when the body fails (error or Ctrl-C) and the body created it."""
    existed = path is None or path.exists()
    try:
        yield
    except BaseException:
        if not existed:
            remove_tree(path)   # retried while interrupted children finish (tempdirs.py)
        raise


def _cmd_analyze(args: argparse.Namespace) -> int:
    from .pipeline import Options, load, lower, schedule_network
    from .report.analysis import analyze_layers

    check_report_destination(args.report)   # before any work (cli_paths.py)
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
    lg = lower(load(args.model, Options(input_dtypes=_input_dtypes(args, args.model) or {})))
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
        ns = schedule_network(lg, target, args.tiler, objective=args.objective)
    elif args.why:
        raise TilewiseError("--why needs --target (it lists each layer's candidate modules and "
                            "kernels)")
    code = None
    if args.code_size:
        if ns is None:
            raise TilewiseError("--code-size needs --target (it builds the target's firmware)")
        from .validate.code_size import measure

        code = measure(ns, Path(args.model).name)
    analysis = analyze_layers(lg, ns, why=args.why, code=code)
    _analyze_report(args, analysis, ns, target)
    if args.json:
        print(json.dumps(analysis.to_json(), indent=2))
    elif args.csv:
        from .report.tables import write_csv

        write_csv(analysis, sys.stdout)
    else:
        from .report.tables import print_analysis

        print_analysis(analysis, wide=args.wide)
    return 0


def _analyze_report(args: argparse.Namespace, analysis, ns, target) -> None:
    """`analyze --report DIR`: report.json / .txt / .html of the analysis (report/report_files)."""
    if args.report is None:
        return
    from .report.report_files import build_report, write_report

    path = write_report(args.report, build_report("analyze", analysis, ns, target))
    print(f"tilewise: wrote the report to {path}", file=sys.stderr)


def _input_dtypes(args: argparse.Namespace, *models: str) -> dict[str, str] | None:
    """--input-dtype parsed; the inputs it names checked against each model (one sentence)."""
    dtypes = parse_input_dtypes(getattr(args, "input_dtype", None))
    if dtypes and any(n != "*" for n in dtypes):
        from .pipeline import Options, load

        for m in models:
            check_input_dtypes(load(m, Options(input_dtypes=dtypes)), dtypes)
    return dtypes


def _add_report_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--report", metavar="DIR", help=f"write report.json, report.txt and report.html "
                   f"(per-layer table and plots) of {what} to DIR")


def _cmd_targets(args: argparse.Namespace) -> int:
    from .report.targets_report import print_targets, targets_json

    if args.json:
        print(json.dumps(targets_json(), indent=2))
    else:
        print_targets()
    return 0


def _cmd_ops(args: argparse.Namespace) -> int:
    from .report.ops import ops_json, ops_text
    from .targets.registry import get_target

    target = get_target(args.target) if args.target else None
    print(json.dumps(ops_json(target), indent=2) if args.json else ops_text(target))
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from .codegen import generate_model

    out = output_dir(args.out)
    check_out_dir(out, f"-o {args.out}", args.force)
    check_report_destination(args.report)
    target = target_from_args(args)
    dtypes = _input_dtypes(args, args.model)
    with removed_on_failure(out):
        project, ns = generate_model(args.model, target, args.tiler, out,
                                     objective=args.objective, c_name=_c_name(args),
                                     input_dtypes=dtypes)
    project = replace(project, path=Path(args.out))   # reported as the user wrote it
    m = project.manifest
    print(f"tilewise: wrote {project.path} — {len(m['layers'])} layers for {m['target']} "
          f"(tiler {m['tiler']}): L1 arena {m['l1_bytes']:,} B, L2 arena {m['l2_arena_bytes']:,} B + "
          f"{m['l2_image_bytes']:,} B of constants (plan peak {m['l2_peak_bytes']:,} B), "
          + (f"{m['flash_bytes']:,} B of constants in flash, " if m["flash_bytes"] else "")
          + f"L3 image {m['l3_bytes']:,} B, "
          f"DMA {m['dma_bytes_predicted']:,} B per inference; build with `make -C {project.path}`")
    for note in ns.layers.meta.get("notes", ()):
        print(f"tilewise: note: {note}")
    _project_report(args, "generate", ns, project.path)
    if m.get("hypothetical"):
        print("tilewise: note: hypothetical chip — settings beyond the physical "
              f"{m['target']} (--hypothetical)")
    return 0


def _project_report(args: argparse.Namespace, command: str, ns, project: Path | None,
                    validation=None) -> None:
    """generate / validate: the report into <project>/report (when a project is kept) and into
    --report DIR (report/report_files)."""
    from .report.analysis import analyze_layers
    from .report.report_files import build_report, render_html, write_report

    dirs = ([Path(project) / "report"] if project is not None else []) + (
        [Path(args.report)] if args.report is not None else [])
    if not dirs:
        return
    rep = build_report(command, analyze_layers(ns.layers, ns), ns, ns.target, validation, project)
    html = render_html(rep)   # the plots drawn once for every copy
    for d in dirs:
        path = write_report(d, rep, html=html)
        print(f"tilewise: wrote the report to {path}", file=sys.stderr)


def _validate_report(args: argparse.Namespace, report) -> None:
    """validate: the report (table and plots of the schedule the generated C executes), written
    when the project is kept or --report is given."""
    project = Path(report.project) if Path(report.project).is_dir() else None
    if project is None and args.report is None:
        return
    _project_report(args, "validate", report.schedule, project, report)


#: validate --inputs N at most (random inputs)
MAX_INPUTS = 100_000


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate_path
    from .validate.text import format_report

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
    dtypes = _input_dtypes(args, args.model)
    with removed_on_failure(out):
        if data_requested(args):   # validation on the user's own data (cli_data.py)
            report = validate_data_from_args(args, target, out, _c_name(args), dtypes)
        else:
            report = validate_path(args.model, target, args.tiler, args.inputs, args.seed,
                                   out, objective=args.objective, on=args.on,
                                   c_name=_c_name(args), input_dtypes=dtypes)
    _validate_report(args, report)
    if args.json:
        print(json.dumps({**report.to_json(), **({"hypothetical": True} if target.hypothetical
                                                 else {})}, indent=2))
    else:
        print(format_report(report))
        if target.hypothetical:
            print(f"hypothetical chip: settings beyond the physical {target.name} (--hypothetical)")
    return 0 if report.bit_exact else 1


def _add_force_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="write into an -o directory that is not "
                   "empty and holds no tilewise project (files of the generated names are "
                   "overwritten; no other file is deleted)")


def _add_name_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default="tw", metavar="PREFIX",
                   help="prefix of every C name of the project (PREFIX_network_run, "
                        "PREFIX_INPUT_SCALE …) so that several networks link into one "
                        "firmware; a C identifier (default: tw)")


def _c_name(args: argparse.Namespace) -> str:
    from .codegen.names import check_name

    return check_name(args.name)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    out = output_dir(args.out) if args.out else None
    with removed_on_failure(out):
        return run_demo(out_dir=out)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="tilewise", description="Deploy quantized networks as tiled, bit-exact C.")
    p.add_argument("--version", action="version", version=f"tilewise {_version()}")
    p.add_argument("--quiet", action="store_true", help="no progress bars (they are drawn on a "
                   "terminal's stderr only)")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="per-layer table: shapes, MACs, weights, activations")
    a.add_argument("model", help=".tflite or .onnx model")
    a.add_argument("--json", action="store_true", help="print JSON instead of tables")
    fmt = a.add_mutually_exclusive_group()
    fmt.add_argument("--wide", action="store_true", help="every column of the table (the default "
                     "set fits 100 columns)")
    fmt.add_argument("--csv", action="store_true", help="print the table as CSV: every column, "
                     "one row per layer, a header row")
    _add_report_option(a, "the analysis")
    a.add_argument("--why", action="store_true", help="with --target: every layer's candidate "
                   "modules and kernels, and why each was rejected or not chosen")
    a.add_argument("--ablation", action="store_true", help="with --target: the network on each "
                   "module set the target lists (seed 003 Table IV): cycles, latency, speed-up "
                   "over the first set, layers per module")
    a.add_argument("--code-size", action="store_true", help="with --target stm32h7 or "
                   "pulp-open: build the network's firmware and count its code in flash (the "
                   "linked network, layers, kernels and HAL)")
    add_target_options(a)
    add_input_dtype_option(a)
    a.set_defaults(fn=_cmd_analyze)
    t = sub.add_parser("targets", help="the built-in targets and their parameters")
    t.add_argument("--json", action="store_true", help="print JSON instead of tables")
    t.set_defaults(fn=_cmd_targets)
    o = sub.add_parser("ops", help="the operators each frontend accepts; with --target, the "
                                   "modules and kernels that run each op and their precisions")
    o.add_argument("--target", help="built-in target (see `tilewise targets`)")
    o.add_argument("--json", action="store_true", help="print JSON instead of text")
    o.set_defaults(fn=_cmd_ops)
    g = sub.add_parser("generate", help="write the tiled C project of a model for a target")
    g.add_argument("model", help=".tflite or .onnx model")
    g.add_argument("-o", "--out", required=True, help="directory of the generated project")
    add_target_options(g, required=True)
    _add_report_option(g, "the generated network (one is also written to <project>/report)")
    _add_name_option(g)
    _add_force_option(g)
    add_input_dtype_option(g)
    g.set_defaults(fn=_cmd_generate)
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
                        "for --target stm32h7, its Cortex-M7 firmware under QEMU (mps2-an500), "
                        "or under an instruction-counting emulator (count: executed instructions "
                        "per inference and per layer)")
    add_data_options(v)
    add_target_options(v, required=True)
    _add_report_option(v, "the validation (one is also written to <project>/report when the "
                          "project is kept)")
    _add_name_option(v)
    _add_force_option(v)
    add_input_dtype_option(v)
    v.set_defaults(fn=_cmd_validate)
    d = sub.add_parser("demo", help="the main job on the bundled example model")
    d.add_argument("-o", "--out", help="directory for the demo's outputs (default: a temporary one)")
    d.set_defaults(fn=_cmd_demo)
    _add_explore(sub)
    from .quantize.cli import add_quantize   # `tilewise quantize` (issue 15): tilewise/quantize/cli.py
    add_quantize(sub)
    for command in sub.choices.values():   # --quiet after the command too (`validate --quiet`)
        command.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                             help="no progress bars")
    return p


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tilewise")
    except PackageNotFoundError:   # running from a source tree that was never installed
        return "unknown (not installed)"


def _stdout_closed() -> int:
    """stdout's reader went away (`tilewise ... | head`): no message, like a C tool killed by
    SIGPIPE (exit 141); stdout is pointed at /dev/null so the interpreter's final flush is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _stdout_is_devnull() -> bool:
    try:
        a, b = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class _Interrupt:
    """SIGINT as KeyboardInterrupt, remembered: a library that swallows the exception (the
    reference runtimes turn it into their own failure, or drop it) cannot hide the Ctrl-C from
    main, which then exits 130 whatever the command returned."""

    def __init__(self) -> None:
        self.seen = False
        self.reported = False
        self.previous = None
        self.previous_hook = sys.unraisablehook

    def __enter__(self) -> "_Interrupt":
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handler)
            self.previous_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            # once interrupted the process is on its way out with 130: a further SIGINT (a second
            # Ctrl-C, or one a library left pending) must not become a KeyboardInterrupt at
            # interpreter shutdown, which would end the process by the signal instead
            signal.signal(signal.SIGINT, signal.SIG_IGN if self.seen else self.previous)
            sys.unraisablehook = self.previous_hook

    def _unraisable(self, unraisable) -> None:
        # a Ctrl-C that lands in a callback Python cannot raise from (a weakref callback inside
        # importlib, a __del__) is printed as "Exception ignored ... KeyboardInterrupt" with a
        # traceback and then dropped; deliver it again so that it lands in ordinary code (main
        # then exits 130 quietly) instead of letting the command run on to its end. Delivered from
        # another thread a moment later: from inside this hook the handler would run in the hook.
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            threading.Timer(0.01, _thread.interrupt_main, (signal.SIGINT,)).start()
            return
        self.previous_hook(unraisable)

    def report(self) -> int:
        """Say "interrupted" once (however many places see the Ctrl-C) and give the exit code."""
        if not self.reported:
            self.reported = True
            print("tilewise: interrupted", file=sys.stderr)
        return 130

    def _handler(self, signum, frame) -> None:
        self.seen = True
        raise KeyboardInterrupt


def _cmd_explore(args: argparse.Namespace) -> int:
    """`tilewise explore`: a design-space sweep (tilewise/explore)."""
    from .explore import explore

    output_dir(args.out)   # an uncreatable or read-only -o: one sentence before any work
    r = explore(args.models, args.target, args.out, l1=args.l1, l2=args.l2, cores=args.cores,
                clock=args.clock, tiler=args.tiler, modules=args.modules,
                objective=args.objective, measure=args.measure, workers=args.workers,
                cluster=args.cluster, input_dtypes=_input_dtypes(args, *args.models))
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
    add_input_dtype_option(e)
    e.set_defaults(fn=_cmd_explore)



def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:   # argparse's refusals: one sentence, exit 2 (cli_parser.py)
        print(f"tilewise: error: {e}", file=sys.stderr)
        return 2
    from .progress import set_quiet

    set_quiet(args.quiet, notes=not getattr(args, "json", False))
    interrupt = _Interrupt()
    try:
        with interrupt:
            rc = _run(args, interrupt)
    except KeyboardInterrupt:   # landed outside _run's try: in one of its handlers, or on the way out
        return interrupt.report()
    if interrupt.seen or rc == 130:
        return interrupt.report()
    return rc


def _run(args: argparse.Namespace, interrupt: _Interrupt) -> int:
    try:
        rc = int(args.fn(args))
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        return _stdout_closed()
    except SystemExit as e:   # rich's console on a closed stdout: it already muted stdout
        if e.code == 1 and _stdout_is_devnull():
            return 141
        raise
    except TilewiseError as e:
        if interrupt.seen:   # a failure the Ctrl-C caused
            return interrupt.report()
        print(f"tilewise: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupt.report()
    except Exception as e:  # an internal bug: say so in one line unless debugging
        if interrupt.seen:
            return interrupt.report()
        if os.environ.get("TILEWISE_DEBUG"):
            raise
        print(f"tilewise: internal error ({type(e).__name__}: {e}); rerun with TILEWISE_DEBUG=1 and report it", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
