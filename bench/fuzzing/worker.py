"""Runs mutated models through the CLI in a worker process under a time and a memory limit.

A case is what a user does: the bytes are written to a file with the importer's suffix and
`tilewise analyze FILE [extra args]` runs in-process in the worker (cli.main, so the exit code
is the one a user sees). The worker runs with TILEWISE_DEBUG=1, so an internal error (exit 3)
arrives as its exception and traceback. The worker's address space is capped with RLIMIT_AS
(a MemoryError then is an unbounded allocation: counted as `memory`, a bug like exit 3), and the
parent waits at most `seconds` per case: past that the worker is killed and restarted and the
case is a hang. A worker that dies (a signal in native code) is a crash.

Outcome kinds: ok (exit 0), exit2 (one-sentence refusal), exit3, memory, hang, crash.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUGS = ("exit3", "memory", "hang", "crash")


@dataclass(frozen=True)
class Limits:
    seconds: float = 10.0
    memory_mb: int = 2048


@dataclass(frozen=True)
class Outcome:
    kind: str
    #: exit 2: the message; exit 3 / memory: the exception and the innermost frames
    message: str
    seconds: float
    #: the worker's peak resident set so far (kB)
    max_rss_kb: int

    @property
    def bug(self) -> bool:
        return self.kind in BUGS


def _tail(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-7:]
    where = " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))
    return f"{type(exc).__name__}: {str(exc)[:300]} at {where}"


def _run_case(path: Path, extra: tuple[str, ...]) -> tuple[str, str]:
    from tilewise import cli

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(["analyze", str(path), *extra])
    except MemoryError as e:
        return "memory", _tail(e)
    except Exception as e:  # noqa: BLE001 — TILEWISE_DEBUG=1: the CLI re-raised its internal error
        return "exit3", _tail(e)
    text = err.getvalue().strip()
    if rc == 0:
        return "ok", ""
    if rc == 2:
        return "exit2", text
    return "exit3", f"exit {rc}: {text[:400]}"


def _serve(conn: Any, memory_mb: int) -> None:
    """The worker's loop: (bytes, suffix, extra CLI args) in, (kind, message, seconds, max RSS kB)
    out."""
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ["TILEWISE_DEBUG"] = "1"
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import tilewise.cli  # noqa: F401 — imported once, before the first case's clock starts
    import tilewise.frontend.onnx  # noqa: F401
    import tilewise.frontend.tflite  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="tilewise_fuzz_") as tmp:
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg is None:
                return
            data, suffix, extra = msg
            path = Path(tmp) / f"model{suffix}"
            path.write_bytes(data)
            t0 = time.perf_counter()
            kind, text = _run_case(path, extra)
            conn.send((kind, text, time.perf_counter() - t0,
                       resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))


class Runner:
    """A worker process running cases one at a time (restarted after a hang or a crash)."""

    def __init__(self, limits: Limits = Limits()) -> None:
        self.limits = limits
        self._ctx = mp.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self.limits.memory_mb),
                                       daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        # the first case should not pay for the imports: wait for the worker to be ready
        self._conn.send((b"", ".onnx", ()))
        if not self._conn.poll(120):
            raise RuntimeError("the fuzzing worker did not start within 120 s")
        self._conn.recv()

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
            self._conn.close()
        self._proc = self._conn = None

    def run(self, data: bytes, suffix: str, extra: tuple[str, ...] = (), seconds: float | None = None) -> Outcome:
        """`tilewise analyze` on `data` saved as a `suffix` file, `extra`: more arguments;
        `seconds`: this case's time limit (default: the Limits')."""
        limit = self.limits.seconds if seconds is None else seconds
        if self._proc is None:
            self._start()
        t0 = time.perf_counter()
        try:
            self._conn.send((data, suffix, tuple(extra)))
            ready = self._conn.poll(limit)
            if ready:
                kind, text, seconds, rss = self._conn.recv()
                return Outcome(kind, text, seconds, rss)
        except (EOFError, BrokenPipeError, ConnectionResetError):
            ready = True
        dt = time.perf_counter() - t0
        alive = self._proc.is_alive()
        code = self._proc.exitcode
        self._stop()
        if not ready and alive:
            return Outcome("hang", f"no result within {limit:g} s", dt, 0)
        return Outcome("crash", f"the worker died (exit code {code})", dt, 0)

    def close(self) -> None:
        if self._proc is not None:
            try:
                self._conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            self._proc.join(5)
        self._stop()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _self_check() -> None:   # pragma: no cover — `python -m bench.fuzzing.worker FILE`
    with Runner() as r:
        for f in sys.argv[1:]:
            print(f, r.run(Path(f).read_bytes(), Path(f).suffix))


if __name__ == "__main__":   # pragma: no cover
    _self_check()
