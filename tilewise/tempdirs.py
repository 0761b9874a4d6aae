"""Temporary directories that a Ctrl-C cannot leave behind.

Two races did: a SIGINT landing between the directory's creation and the `try` that removes it
(a loaded machine can pre-empt the process right after mkdir), and a removal running while the
compiler or the program it built — interrupted by the same Ctrl-C, which a terminal sends to the
whole process group — still writes into the directory for a moment, so that rmtree leaves it
non-empty. `temp_dir` creates the directory with a Ctrl-C held back until its guard is in place;
`remove_tree` tries again for a moment until the directory is gone.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: seconds `remove_tree` keeps trying while interrupted children finish writing
SETTLE = 3.0


def remove_tree(path: Path, settle: float = SETTLE) -> None:
    """Remove `path` and everything in it; retried for up to `settle` seconds while files still
    appear in it (children on their way out)."""
    deadline = time.monotonic() + settle
    while True:
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists() or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


class HeldInterrupts:
    """While held, a Ctrl-C is recorded instead of raised (the Python-level SIGINT handler runs in
    the main thread whichever thread the signal reached); `release` restores the handler and
    delivers a recorded Ctrl-C through it. Nothing is held outside the main thread."""

    def __init__(self) -> None:
        self.held: list[tuple[int, Any]] = []
        self.previous: Any = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):
                self.previous = previous
                signal.signal(signal.SIGINT, lambda signum, frame: self.held.append((signum, frame)))

    def release(self, deliver: bool = True) -> None:
        previous, self.previous = self.previous, None
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
            if deliver and self.held:
                previous(*self.held[0])


def remove_uninterrupted(path: Path) -> None:
    """`remove_tree` that a further Ctrl-C does not cut short (delivered once it is done)."""
    held = HeldInterrupts()
    try:
        remove_tree(path)
    finally:
        held.release()


@contextlib.contextmanager
def temp_dir(prefix: str, keep_on_success: bool = True, dir: str | None = None) -> Iterator[Path]:
    """A new temporary directory, removed when the body raises (an error, Ctrl-C) and, unless
    `keep_on_success`, when it ends. A Ctrl-C while it is created is held back and delivered
    once the guard is in place; one during its removal, once it is removed."""
    held = HeldInterrupts()
    try:
        work = Path(tempfile.mkdtemp(prefix=prefix, dir=dir))
    except BaseException:
        held.release(deliver=False)
        raise
    try:
        held.release()   # a Ctrl-C held back lands here, inside the guard
        yield work
    except BaseException:
        remove_uninterrupted(work)
        raise
    if not keep_on_success:
        remove_uninterrupted(work)
