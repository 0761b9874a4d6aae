"""Run a simulator whose launcher starts a tree of processes, and leave nothing behind.

GVSoC's `gvsoc-run` is a shell script that runs `timeout` (which puts itself and the simulator in
a process group of their own), a Python launcher and the simulator proper. A Ctrl-C that reaches
only the script, or Python's `subprocess.run` killing the script alone on KeyboardInterrupt,
leaves the simulator running and its work directory behind. `run_session` starts the command in
a session of its own and, when the wait ends any other way than by the command's exit (Ctrl-C,
the timeout, any error), ends every process of that session — found by their session id, which
`timeout`'s own process group keeps — first with SIGTERM, then with SIGKILL.

`ascii_work_dir` is a temporary directory whose path is plain ASCII (GVSoC's loader cannot open
a binary whose path has other characters: "Unable to open binary (path: /tmp/h\\u00e9/...)"),
removed on the way out whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..tempdirs import HeldInterrupts, temp_dir

#: seconds the session's processes get to end after SIGTERM before SIGKILL
GRACE = 2.0


def session_pids(sid: int) -> list[int]:
    """The processes of session `sid` (Linux /proc; empty elsewhere)."""
    pids = []
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()   # after "pid (comm) ": state ppid pgrp session
        if len(fields) > 3 and int(fields[3]) == sid:
            pids.append(int(entry.name))
    return pids


def end_session(proc: subprocess.Popen) -> None:
    """End every process of `proc`'s session (SIGTERM, then SIGKILL after GRACE) and reap it."""
    sid = proc.pid
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in {sid, *session_pids(sid)}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline:
            if proc.poll() is not None and not session_pids(sid):
                return
            time.sleep(0.02)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=GRACE)


def run_session(args: Sequence[str], timeout: float, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess:
    """`subprocess.run(args, capture_output=True, text=True)` in a new session; on Ctrl-C, the
    timeout (TimeoutExpired, as subprocess.run) or any error, the whole session is ended first."""
    proc = subprocess.Popen(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        held = HeldInterrupts()   # a second Ctrl-C must not leave the simulator running
        try:
            end_session(proc)
            with contextlib.suppress(Exception):
                proc.communicate(timeout=GRACE)   # close the pipes
        finally:
            held.release()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def ascii_temp_root() -> str:
    """The temporary directory when its path is ASCII, else /tmp."""
    root = tempfile.gettempdir()
    return root if root.isascii() else "/tmp"


@contextlib.contextmanager
def ascii_work_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory with an ASCII path, removed on the way out (also on Ctrl-C)."""
    with temp_dir(prefix, keep_on_success=False, dir=ascii_temp_root()) as work:
        yield work
