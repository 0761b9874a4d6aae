"""The jinja2 templates every emitted C file is written from: where they are looked up, how
whitespace is handled, and the few filters they share. A helper of the base layer (no tilewise
import): the kernel families (bindings/) render their C with it, and codegen the project's, so
that a binding does not depend on codegen (tests/test_layering.py).

The Python side of code generation computes data (loops, buffers, offsets, which operand moves
under which loop condition: what the schedule and the codegen plan decided) and hands it to a
template, which holds the C syntax: a template reads as the file it writes.

Folders: `tilewise/codegen/templates/` holds the project's templates (a layer's loop nest, the L3
driver, network.c, the host harness ...) and the macros they share (`c.j2`). A kernel family may
keep its own templates in its bindings folder (`bindings/<family>/templates/`, shipped as package
data) and render them with `render(name, folder, **data)`: its folder is searched first (or its
folders, in order: a family that builds on another lists its own, then the other's), then the
codegen folder, so a family template can `{% from "c.j2" import guarded %}` or include a codegen
template.

Environment settings (the same for every folder):
- `trim_blocks` + `lstrip_blocks`: a line that holds only a `{% ... %}` tag leaves nothing in the
  output; `keep_trailing_newline`: a template's last newline is kept;
- `StrictUndefined`: a name the Python side did not pass is an error, never an empty string;
- no autoescaping (the output is C, not HTML).
Writing C in jinja2: a brace right next to an expression is written `{ {{- x -}} }` (renders `{x}`).

Filters: `c_comment` (a block of text as a C block comment), `plural` ("s" unless the count is
1), `thousands` (a number rounded, with thousands separators: `63,330`), `c_float` (the exact C
literal of a number's float32 value: `0x1.99999ap-4f`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

#: the codegen templates (tilewise/codegen/templates/*.j2)
TEMPLATES = Path(__file__).resolve().parent / "codegen" / "templates"


def c_comment(text: str) -> str:
    """`text` as a C block comment: `/*`, ` * line` for each line (trailing spaces dropped),
    ` */` and a newline. Used as a block filter: `{% filter c_comment %}...{% endfilter %}`."""
    lines = text.removesuffix("\n").split("\n")
    return "/*\n" + "\n".join(f" * {line}".rstrip() for line in lines) + "\n */\n"


def plural(n: int) -> str:
    """The plural ending of a count: `{{ n }} transfer{{ n|plural }}`."""
    return "" if n == 1 else "s"


def thousands(v: float) -> str:
    """`v` rounded to an integer with thousands separators (cycle counts)."""
    return f"{v:,.0f}"


def c_float(v: float) -> str:
    """A C float literal that is exactly the float32 value of `v` (a hex float, C99): what a
    float32 constant of the reference runtime is in the generated C."""
    f = float(np.float32(v))
    if f == 0.0:
        return "0.0f"
    return f"{f.hex()}f"


def c_string(text: str) -> str:
    """`text` as a C string literal: printable ASCII as is (quote and backslash escaped), every
    other byte of its UTF-8 as a three-digit octal escape (tensor and model names)."""
    out = []
    for b in str(text).encode("utf-8"):
        c = chr(b)
        out.append("\\" + c if c in '"\\' else c if 32 <= b < 127 else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def environment(folder: Path | Sequence[Path] | None = None) -> Environment:
    """The environment of the templates in `folder` (or in several folders, searched in order:
    a family's own, then those of the families it builds on), then the codegen folder (one
    environment per list of folders)."""
    given = [] if folder is None else [folder] if isinstance(folder, (str, Path)) else list(folder)
    folders = tuple(p for p in (Path(f).resolve() for f in given) if p != TEMPLATES)
    return _environment(folders)


@cache
def _environment(folders: tuple[Path, ...]) -> Environment:
    env = Environment(loader=FileSystemLoader([str(f) for f in (*folders, TEMPLATES)]),
                      undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      autoescape=False)
    env.filters.update(c_comment=c_comment, plural=plural, thousands=thousands, c_float=c_float,
                       c_string=c_string)
    return env


def render(name: str, folder: Path | Sequence[Path] | None = None, /, **data: Any) -> str:
    """The text of template `name` (looked up in `folder` or folders, then the codegen folder)
    with `data`."""
    return environment(folder).get_template(name).render(**data)
