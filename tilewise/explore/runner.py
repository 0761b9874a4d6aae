"""Run the points of a sweep: the cached ones are read back, the others computed on a local
process pool (default) or on a Dask distributed scheduler (`cluster="tcp://HOST:PORT"`).

Each result is cached as soon as it arrives (cache.py), in the process that drives the sweep, so
SIGINT (Ctrl-C) loses only the points in flight: the pool's workers ignore SIGINT and are ended by
the driver, which says how many points are cached and re-raises KeyboardInterrupt (exit 130).

Local pool: `concurrent.futures.ProcessPoolExecutor` with the fork start method, created after the
driver lowered every model (point.py `lowered`), so the workers inherit the lowered graphs; with
one worker (or one point) the points run in the driver. Dask: `distributed.Client(address)`, one
task per point (`Client.map`, not pure: a point's key is ours); each Dask worker lowers each model
once (point.py's per-process cache) and must see the model files at the same paths (one machine,
or a shared file system). A point that raises something other than a TilewiseError is an internal
error: its row has status "error", is not cached, and the command exits 3 after writing outputs.
Progress: a rich progress bar on stderr when stderr is a terminal.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..errors import TilewiseError
from .cache import Cache, point_key
from .grid import Point
from .point import evaluate


@dataclass(frozen=True)
class RunStats:
    points: int
    cached: int
    computed: int
    errors: int


def evaluate_safe(p: Point) -> dict:
    """`evaluate`, with an internal error turned into an "error" row (not cached)."""
    try:
        return evaluate(p)
    except Exception as e:  # a bug in the prediction path: recorded, reported, exit 3
        return {"model": p.model_name, **p.settings(), "status": "error",
                "reason": f"internal error ({type(e).__name__}: {e})",
                "traceback": traceback.format_exc()}


def from_cache(cache: Cache, key: str, p: Point) -> dict | None:
    """The cached row of `p`, or None. The key holds the model's bytes, not its path: a row written
    by a sweep of the same bytes under another name (a renamed file, or a copy given beside the
    original) is named after `p`'s model, so each file keeps its own rows and Pareto group."""
    row = cache.get(key)
    if row is not None:
        row["model"] = p.model_name
    return row


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local(points: Sequence[Point], workers: int) -> Iterator[tuple[int, dict]]:
    """The points' rows as they complete; the pool (if any) is forked here, before the caller
    starts its progress bar's thread."""
    if workers <= 1 or len(points) <= 1:
        return ((i, evaluate_safe(p)) for i, p in enumerate(points))
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ex = ProcessPoolExecutor(max_workers=min(workers, len(points)),
                             mp_context=mp.get_context("fork"), initializer=_ignore_sigint)
    futs = {ex.submit(evaluate_safe, p): i for i, p in enumerate(points)}
    return _drain(ex, futs)


def _drain(ex, futs: dict) -> Iterator[tuple[int, dict]]:
    from concurrent.futures import as_completed

    try:
        for f in as_completed(futs):
            yield futs[f], f.result()
    finally:
        procs = list((getattr(ex, "_processes", None) or {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for proc in procs:  # in-flight points of an interrupted sweep: end our own workers
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=5)


def _dask(points: Sequence[Point], address: str) -> Iterator[tuple[int, dict]]:
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - pinned in pyproject
        raise TilewiseError("--cluster needs the dask 'distributed' package (pip install "
                            "distributed)") from None
    if not address.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise TilewiseError(f"bad --cluster {address!r}: give a Dask scheduler address such as "
                            f"tcp://HOST:PORT")
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError) as e:
        raise TilewiseError(f"cannot reach the Dask scheduler at {address} ({e})") from None
    futs = client.map(evaluate_safe, list(points), pure=False)
    return _drain_dask(client, futs)


def _drain_dask(client, futs: list) -> Iterator[tuple[int, dict]]:
    from distributed import as_completed

    index = {f.key: i for i, f in enumerate(futs)}
    try:
        for f in as_completed(futs):
            yield index[f.key], f.result()
    finally:
        client.close()


def run_points(points: Sequence[Point], cache: Cache, *, workers: int | None = None,
               cluster: str | None = None, progress: bool | None = None) -> tuple[list[dict], RunStats]:
    """The row of every point (in the points' order) and how many were cached / computed."""
    keys = [point_key(p) for p in points]
    rows: list[dict | None] = [None] * len(points)
    for i, k in enumerate(keys):
        rows[i] = from_cache(cache, k, points[i])
    todo = [i for i, r in enumerate(rows) if r is None]
    n_cached = len(points) - len(todo)
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise TilewiseError(f"--workers must be at least 1, got {workers}")
    sub = [points[i] for i in todo]
    if not sub:
        gen: Iterator[tuple[int, dict]] = iter(())
    elif cluster:
        gen = _dask(sub, cluster)
    else:
        gen = _local(sub, workers)
    bar = _progress(progress, len(points), n_cached)
    done = errors = 0
    try:
        for j, row in gen:
            i = todo[j]
            row["key"] = keys[i]
            rows[i] = row
            if row["status"] == "error":
                errors += 1
            else:
                cache.put(keys[i], row)
            done += 1
            if bar is not None:
                bar.advance()
    except KeyboardInterrupt:
        if bar is not None:
            bar.stop()
        print(f"tilewise: explore interrupted: {n_cached + done - errors} of {len(points)} points "
              f"are cached in {cache.dir}; run the same command again to resume",
              file=sys.stderr)
        raise
    finally:
        if bar is not None:
            bar.stop()
        close = getattr(gen, "close", None)
        if close is not None:  # ends the pool's workers / the Dask client now, not at exit
            close()
    return [r for r in rows if r is not None], RunStats(len(points), n_cached, done, errors)


class _Bar:
    def __init__(self, total: int, done: int):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.p = Progress(TextColumn("explore"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), TimeRemainingColumn(),
                          console=Console(stderr=True), transient=False)
        self.task = self.p.add_task("points", total=total, completed=done)
        self.p.start()
        self.live = True

    def advance(self) -> None:
        self.p.advance(self.task)

    def stop(self) -> None:
        if self.live:
            self.p.stop()
            self.live = False


def _progress(want: bool | None, total: int, done: int) -> _Bar | None:
    if want is None:
        want = sys.stderr.isatty()
    return _Bar(total, done) if want and total else None
