"""The `tilewise` command line: analyze, targets, ops, generate, validate, explore, quantize, demo —
one module per command (its `add(sub)` builds the subcommand, `run(args)` runs it), the driver in
main.py, shared pieces in common.py, options.py, data.py, parser.py and paths.py.

Exit codes: 0 success, 1 validation mismatch, 2 bad input (one sentence on stderr, no traceback),
130 interrupted (Ctrl-C; temporary directories removed), 141 stdout closed early (`| head`: quiet,
as a C tool killed by SIGPIPE). Set TILEWISE_DEBUG=1 to see tracebacks of internal errors.

Output directories (-o) are made absolute where the CLI receives them (the compiler runs in the
project directory, so a caller-relative path would name the wrong place) and checked before any
work: an existing file, or a place that cannot be created or written, is bad input; a directory
the command created is removed again when the command fails.
"""

from .main import _Interrupt, build_parser, main  # noqa: F401  (_Interrupt: tests/test_cli_errors.py)
from .validate import MAX_INPUTS

__all__ = ["MAX_INPUTS", "build_parser", "main"]
