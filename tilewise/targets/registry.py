"""The built-in targets by name, with the CLI's overrides (--l1, --l2, --cores, --clock).

A built-in target is a module of this package that defines `TARGET` (one file per chip): the
registry finds them itself, so adding a chip touches its own file only.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..errors import TilewiseError
from .base import Target

#: modules of the package that are not chips
_NOT_CHIPS = frozenset({"base", "registry"})


def _builtin() -> dict[str, Target]:
    """Every `TARGET` of a chip module of this package, by name (duplicate names are a bug)."""
    found: dict[str, Target] = {}
    package = __name__.rsplit(".", 1)[0]
    for info in sorted(pkgutil.iter_modules(importlib.import_module(package).__path__), key=lambda i: i.name):
        if info.name in _NOT_CHIPS or info.name.startswith("_"):
            continue
        target = getattr(importlib.import_module(f"{package}.{info.name}"), "TARGET", None)
        if isinstance(target, Target):
            assert target.name not in found, f"two built-in targets named {target.name}"
            found[target.name] = target
    return found


_TARGETS: dict[str, Target] = _builtin()


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
