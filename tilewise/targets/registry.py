"""The built-in targets by name, with the CLI's overrides (--l1, --l2, --cores, --clock)."""

from __future__ import annotations

from ..errors import TilewiseError
from . import diana, gap8, gap9, idsp, pulp_open, stm32h7
from .base import Target

_TARGETS: dict[str, Target] = {t.name: t for t in (diana.TARGET, gap8.TARGET, gap9.TARGET, stm32h7.TARGET,
                                                   idsp.TARGET, pulp_open.TARGET)}


def list_targets() -> tuple[Target, ...]:
    """All built-in targets, by name."""
    return tuple(_TARGETS[k] for k in sorted(_TARGETS))


def get_target(name: str, *, l1_kb: float | None = None, l2_kb: float | None = None,
               cores: int | None = None, clock_mhz: float | None = None,
               beyond: bool = False) -> Target:
    """A built-in target with overrides: l1_kb / l2_kb = kB free for tiles at L1 / L2 after the
    target's reservations (DESIGN.md), cores = cores of its scalable modules, clock_mhz; more
    memory or cores than the part has, or a faster clock, only with `beyond`
    (Target.with_overrides). Names are case-insensitive (GAP8 = gap8)."""
    key = name.lower()
    if key not in _TARGETS:
        raise TilewiseError(f"unknown target '{name}'; built-in targets: "
                            f"{', '.join(sorted(_TARGETS))}")
    name = key
    try:
        return _TARGETS[name].with_overrides(l1_kb=l1_kb, l2_kb=l2_kb, cores=cores,
                                             clock_mhz=clock_mhz, beyond=beyond)
    except ValueError as e:
        raise TilewiseError(f"bad override for target {name}: {e}") from None
