"""Progress bars for the long stages (scheduling per layer, building per source, running inputs
per chunk), drawn with rich on stderr — only when stderr is a terminal and the CLI was not given
--quiet. Anywhere else (pipes, files, tests, the API) rich is not imported and stdout is
byte-identical with or without this module (stderr: the long steps' times, below).

    with progress(len(layers), "scheduling") as step:
        for layer in layers:
            ...
            step()          # one unit done (step(n) for n)

Nested calls (building inside validate) add a line to the bars already shown instead of opening a
second display (rich allows one live display at a time).

A step without units (a simulator or emulator run) is `with step("running on GVSoC"): ...`: a
spinner with the elapsed time on a terminal. On a stderr that is not a terminal (a log, CI), a
bar or step that took NOTE_AFTER_S or more is one line when it ends, "tilewise: building: 41.2 s",
so that a log says where the minutes went (the CLI only, not the API); --quiet silences both
forms, --json these lines (a terminal still shows its bars: stdout holds the JSON).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

_quiet = False
#: the CLI runs (set_quiet was called): only then are the non-terminal step times written
_cli = False
#: the rich Progress being shown (None when no bar is up)
_active = None


def set_quiet(quiet: bool, notes: bool = True) -> None:
    """--quiet: never draw a bar in this process; `notes`: write the non-terminal step times (the
    CLI passes False under --json)."""
    global _quiet, _cli
    _quiet, _cli = quiet, notes


def enabled() -> bool:
    """Bars are drawn: stderr is a terminal and not --quiet."""
    try:
        return not _quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):   # a replaced or closed stderr
        return False


def _noop(n: int = 1) -> None:
    return None


#: seconds a bar or step must take to be named with its time on a non-terminal stderr
NOTE_AFTER_S = 5.0


@contextlib.contextmanager
def _timed(what: str) -> Iterator[None]:
    """Not a terminal: "tilewise: WHAT: T s" on stderr when the body took NOTE_AFTER_S or more
    (and not --quiet / --json); nothing when it failed."""
    t0 = time.monotonic()
    yield
    elapsed = time.monotonic() - t0
    if _cli and not _quiet and elapsed >= NOTE_AFTER_S:
        print(f"tilewise: {what}: {elapsed:.1f} s", file=sys.stderr, flush=True)


@contextlib.contextmanager
def step(what: str) -> Iterator[None]:
    """One long step without units (module docstring): a spinner and the elapsed time on a
    terminal, its name and time on any other stderr."""
    global _active
    if not enabled():
        with _timed(what):
            yield
        return
    if _active is not None:   # nested in a display already up: one more line there
        outer = _active
        task = outer.add_task(what, total=None)
        try:
            yield
        finally:
            outer.remove_task(task)
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)
    bar.add_task(what, total=None)
    _active = bar
    try:
        with bar:
            yield
    finally:
        _active = None


@contextlib.contextmanager
def progress(total: int, what: str) -> Iterator[Callable[..., None]]:
    """A bar of `total` units labelled `what`; yields step(n=1). Not a terminal: no bar, the
    name and time when it took long (`_timed`)."""
    global _active
    if not enabled():
        with _timed(what):
            yield _noop
        return
    if _active is not None:   # nested: one more task line on the display already up
        outer = _active
        task = outer.add_task(what, total=total)
        try:
            yield lambda n=1: outer.advance(task, n)
        finally:
            outer.remove_task(task)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(what, total=total)
    _active = bar
    try:
        with bar:
            yield lambda n=1: bar.advance(task, n)
    finally:
        _active = None
