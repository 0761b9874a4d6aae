"""The driver: the parser of every command (one module each, in the order `tilewise --help` lists
them), exit codes, Ctrl-C and a closed stdout (the package docstring)."""

from __future__ import annotations

import _thread
import argparse
import os
import signal
import sys
import threading

from ..errors import TilewiseError
from . import analyze, demo, explore, generate, ops, quantize, targets, validate
from .parser import Parser, UsageError

#: the commands, in the order of `tilewise --help`
COMMANDS = (analyze, targets, ops, generate, validate, demo, explore, quantize)

def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="tilewise", description="Deploy quantized networks as tiled, bit-exact C.")
    p.add_argument("--version", action="version", version=f"tilewise {_version()}")
    p.add_argument("--quiet", action="store_true", help="no progress bars (they are drawn on a "
                   "terminal's stderr only)")
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(sub)
    for command_parser in sub.choices.values():   # --quiet after the command (`validate --quiet`)
        command_parser.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
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

    def __enter__(self) -> _Interrupt:
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:   # argparse's refusals: one sentence, exit 2 (parser.py)
        print(f"tilewise: error: {e}", file=sys.stderr)
        return 2
    from ..progress import set_quiet

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
        print(f"tilewise: internal error ({type(e).__name__}: {e}); rerun with TILEWISE_DEBUG=1 and report it",
              file=sys.stderr)
        return 3
