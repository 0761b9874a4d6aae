"""Progress bars for the long stages (scheduling per layer, building per source, running inputs
per chunk), drawn with rich on stderr — only when stderr is a terminal and the CLI was not given
--quiet. Anywhere else (pipes, files, tests, the API) nothing is written and rich is not imported:
output to a non-terminal is byte-identical with or without this module.

    with progress(len(layers), "scheduling") as step:
        for layer in layers:
            ...
            step()          # one unit done (step(n) for n)

Nested calls (building inside validate) add a line to the bars already shown instead of opening a
second display (rich allows one live display at a time).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

_quiet = False
#: the rich Progress being shown (None when no bar is up)
_active = None


def set_quiet(quiet: bool) -> None:
    """--quiet: never draw a bar in this process."""
    global _quiet
    _quiet = quiet


def enabled() -> bool:
    """Bars are drawn: stderr is a terminal and not --quiet."""
    try:
        return not _quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):   # a replaced or closed stderr
        return False


def _noop(n: int = 1) -> None:
    return None


@contextlib.contextmanager
def progress(total: int, what: str) -> Iterator[Callable[..., None]]:
    """A bar of `total` units labelled `what`; yields step(n=1). A no-op when not `enabled()`."""
    global _active
    if not enabled():
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
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(what, total=total)
    _active = bar
    try:
        with bar:
            yield lambda n=1: bar.advance(task, n)
    finally:
        _active = None
