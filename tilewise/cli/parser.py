"""How the command line reports what argparse refuses: the project's rule for bad input — one
sentence naming the option and what to do, exit 2, no usage dump (docs/commands.md "Bad input").

`Parser` is the `argparse.ArgumentParser` of `tilewise` and of every subcommand (subparsers take
their parent's class): a value outside an option's choices names the choices ("--objective
'foo' is not one of latency, energy, edp; give one of them"), and any other refusal of argparse
(a missing or unknown option, an int or float option given something else, a value its type
function refuses) becomes the same one line. Both raise
`UsageError`, which `cli.main` prints as `tilewise: error: ...` and turns into exit 2. `--help`
and `--version` print and exit 0 as argparse does.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..errors import TilewiseError


class UsageError(TilewiseError):
    """A command line argparse refused (one sentence, exit 2)."""


def option_name(action: argparse.Action) -> str:
    """How the user wrote the option: its long form (--out, not -o), or a positional's metavar."""
    if action.option_strings:
        longs = [s for s in action.option_strings if s.startswith("--")]
        return (longs or action.option_strings)[0]
    if isinstance(action, argparse._SubParsersAction):
        return "command"
    meta = action.metavar
    return meta if isinstance(meta, str) else action.dest


class Parser(argparse.ArgumentParser):
    """argparse reporting its refusals as one sentence (module docstring)."""

    def _check_value(self, action: argparse.Action, value) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = ", ".join(map(str, choices))
        if isinstance(action, argparse._SubParsersAction):
            raise UsageError(f"{value!r} is not a {self.prog} command; give one of {names} "
                             f"(see `{self.prog} --help`)")
        raise UsageError(f"{option_name(action)} {value!r} is not one of {names}; give one of "
                         f"them")

    def _get_value(self, action: argparse.Action, arg_string: str):
        kind = {int: "a whole number", float: "a number"}.get(action.type)  # type: ignore[call-overload]
        if kind is None:
            return super()._get_value(action, arg_string)
        try:
            return action.type(arg_string)  # type: ignore[misc]
        except ValueError:
            raise UsageError(f"{option_name(action)} {arg_string!r} is not {kind}; give "
                             f"{kind}") from None

    def error(self, message: str) -> NoReturn:
        """argparse's own refusals (missing or unknown arguments, a value of the wrong type)."""
        if message.startswith("argument "):
            message = message[len("argument "):]
        message = " ".join(message.split())
        raise UsageError(f"{message} (see `{self.prog} --help`)")
