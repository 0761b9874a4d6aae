"""The generated C on the host: generate with the public CLI, build with bench's harness, time it.

`tilewise generate MODEL --target gap8 --cores 1 -o DIR` writes the C project (one core, so the
host HAL computes on one thread); bench/harness/bench_main.c — not the project's own main — links
the project's sources (network, layers, weights, kernels, host HAL) with gcc -O2, keeps the input in
memory and runs the network n times, timing inside the program with clock_gettime. Until the
`generate` command exists every caller gets `unavailable_reason()` and reports it in the tables.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path

from tilewise.cli import build_parser, main as cli_main


def _has_generate() -> bool:
    p = build_parser()
    for action in p._subparsers._group_actions if p._subparsers else ():  # noqa: SLF001
        if "generate" in getattr(action, "choices", {}):
            return True
    return False


def unavailable_reason() -> str | None:
    """None when the generated C can be benchmarked, else why not (shown in the tables)."""
    if not _has_generate():
        return "generate unavailable"
    return None


def generate_cli(model: Path, out: Path, args: Sequence[str]) -> None:
    """`tilewise generate MODEL *args -o OUT`, in-process; raises on a non-zero exit."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli_main(["generate", str(model), *args, "-o", str(out)])
    if rc != 0:
        raise RuntimeError(f"tilewise generate {model.name} failed ({rc}): {err.getvalue().strip()}")


def code_sizes(names: Sequence[str]) -> dict[str, object]:
    reason = unavailable_reason()
    return {n: f"n/a ({reason})" for n in names}
