"""What several commands share: -o directories (made absolute, checked before any work, removed
again when the command that created them fails), --input-dtype checked against the models, the
--report / --force / --name options, and the report files of generate and validate."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import TilewiseError
from ..tempdirs import remove_tree
from .options import check_input_dtypes, parse_input_dtypes


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


def input_dtypes(args: argparse.Namespace, *models: str) -> dict[str, str] | None:
    """--input-dtype parsed; the inputs it names checked against each model (one sentence)."""
    dtypes = parse_input_dtypes(getattr(args, "input_dtype", None))
    if dtypes and any(n != "*" for n in dtypes):
        from ..pipeline import Options, load

        for m in models:
            check_input_dtypes(load(m, Options(input_dtypes=dtypes)), dtypes)
    return dtypes


def add_report_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--report", metavar="DIR", help=f"write report.json, report.txt and report.html "
                   f"(per-layer table and plots) of {what} to DIR")


def add_force_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="write into an -o directory that is not "
                   "empty and holds no tilewise project (files of the generated names are "
                   "overwritten; no other file is deleted)")


def add_name_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default="tw", metavar="PREFIX",
                   help="prefix of every C name of the project (PREFIX_network_run, "
                        "PREFIX_INPUT_SCALE …) so that several networks link into one "
                        "firmware; a C identifier (default: tw)")


def c_name(args: argparse.Namespace) -> str:
    from ..codegen.names import check_name

    return check_name(args.name)


def project_report(args: argparse.Namespace, command: str, ns, project: Path | None,
                    validation=None) -> None:
    """generate / validate: the report into <project>/report (when a project is kept) and into
    --report DIR (report/report_files)."""
    from ..report.analysis import analyze_layers
    from ..report.report_files import build_report, render_html, write_report

    dirs = ([Path(project) / "report"] if project is not None else []) + (
        [Path(args.report)] if args.report is not None else [])
    if not dirs:
        return
    rep = build_report(command, analyze_layers(ns.layers, ns), ns, ns.target, validation, project)
    html = render_html(rep)   # the plots drawn once for every copy
    for d in dirs:
        path = write_report(d, rep, html=html)
        print(f"tilewise: wrote the report to {path}", file=sys.stderr)
