"""What every binding of the pulp family shares: the family, the rendering of its templates and the
4-byte round-up of its L1 layouts (the kernels' word-aligned buffers).

The pulp family is tilewise's XpulpV2 kernel library for the RI5CY 8-core cluster (GAP8, GAP9,
pulp-open; `c/`, copied into projects as `tw_pulp/`), seed 004's PULP-NN structure. It builds on
the portable family (Family.requires): its kernels take the portable argument structs, its
templates extend the portable templates (searched after its own), and the ops it does not
rewrite keep the portable bindings (bindings/pulp/__init__.py). uint8 tensors are stored biased
(u − 128) as the portable family stores them (bindings/portable/common.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...templating import render as _render
from ..base import Family
from ..portable.common import FAMILY as PORTABLE
from ..portable.common import TEMPLATES as PORTABLE_TEMPLATES

FAMILY = Family(name="pulp", c_dir=Path(__file__).resolve().parent / "c", project_dir="tw_pulp",
                header="tw_pulp.h", requires=(PORTABLE,))

#: the family's C templates (templates/*.j2), searched before the portable family's
TEMPLATES = Path(__file__).resolve().parent / "templates"


def render(template: str, **data: Any) -> str:
    """The C of template `template` (the pulp templates, then the portable and codegen ones)."""
    return _render(template, (TEMPLATES, PORTABLE_TEMPLATES), **data)


def round4(n: int) -> int:
    """`n` bytes rounded up to whole 4-byte words (where the C kernels start each L1 buffer)."""
    return (int(n) + 3) // 4 * 4
