"""The schedule of one layer: `schedule_placed` for a placement, `schedule_layer` for a bare nest.

Tilers are plugged in by name: ``model`` (default, schedule/model.py) and ``dory`` (the seed-001
CP-SAT tiler, schedule/dory.py). A tiler is a function
``tile(nest: LoopNest, target: Target, placement: Placement) -> LayerSchedule``; untiled
placements (placement.py) get the untiled schedule whatever the tiler. A tiler raises
`TilewiseError` ("cannot fit: needs at least N bytes of L1 ...") when nothing fits; the caller
prefixes the layer name.

Which module and binding run a layer of a network is partition's choice (tilewise/partition), by
cost over every legal candidate. `schedule_layer` serves bare loop nests (seed studies, tests,
sweeps over synthetic layers): each module of the target (or the one named) with its binding for
the nest's geometry (`nest_placement`), the fastest wins.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..targets.base import Module, Target
from .cost import untiled_schedule
from .placement import Placement, nest_placement
from .space import LayerSchedule

Tiler = Callable[[LoopNest, Target, Placement], LayerSchedule]

#: tiler name -> "module:function", imported on first use
TILERS: dict[str, str] = {
    "model": "tilewise.schedule.model:tile",
    "dory": "tilewise.schedule.dory:tile",
}


def get_tiler(name: str) -> Tiler:
    if name not in TILERS:
        raise TilewiseError(f"unknown tiler '{name}'; available: {', '.join(sorted(TILERS))}")
    modname, fn = TILERS[name].split(":")
    try:
        mod = importlib.import_module(modname)
    except ModuleNotFoundError as e:
        if e.name == modname:
            raise TilewiseError(f"tiler '{name}' is not available in this build") from None
        raise
    return getattr(mod, fn)


#: while `memoized_schedules()` is active: schedule_placed's results by its (equal) arguments
_MEMO: dict | None = None


@contextmanager
def memoized_schedules() -> Iterator[None]:
    """Within the block, `schedule_placed` computes a schedule once per distinct (nest, target,
    placement, tiler) — equal frozen values (bindings compare by identity), so the result is the
    one it would compute again: a network's repeated layer geometries and L3 tiles are tiled
    once. Used by `tilewise explore` around each point; the memo is dropped on exit."""
    global _MEMO
    outer, _MEMO = _MEMO, ({} if _MEMO is None else _MEMO)
    try:
        yield
    finally:
        _MEMO = outer


def schedule_placed(nest: LoopNest, target: Target, placement: Placement,
                    tiler: str = "model") -> LayerSchedule:
    """The schedule of `nest` under `placement` by `tiler`."""
    memo = _MEMO
    if memo is not None:
        key = (nest, target, placement, tiler)
        s = memo.get(key)
        if s is None:
            s = memo[key] = _schedule_placed(nest, target, placement, tiler)
        return s
    return _schedule_placed(nest, target, placement, tiler)


def _schedule_placed(nest: LoopNest, target: Target, placement: Placement,
                     tiler: str) -> LayerSchedule:
    fn = get_tiler(tiler)
    if placement.untiled:
        return untiled_schedule(nest, target, placement, tiler=tiler)
    return fn(nest, target, placement)


def schedule_layer(nest: LoopNest, target: Target, tiler: str = "model",
                   module: str | Module | None = None) -> LayerSchedule:
    """The fastest schedule of a bare loop nest over the target's modules (or `module`)."""
    get_tiler(tiler)
    mods = (module,) if module is not None else tuple(m for m in target.modules
                                                       if not m.chains_only)
    found: list[LayerSchedule] = []
    errors: list[TilewiseError] = []
    for m in mods:
        try:
            found.append(schedule_placed(nest, target, nest_placement(target, nest, m), tiler))
        except TilewiseError as e:
            errors.append(e)
    if not found:
        raise errors[0]
    return min(found, key=lambda s: s.cycles)
