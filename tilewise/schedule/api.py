"""`schedule_layer`: pick the module and the tiler for one layer and return its `LayerSchedule`.

Tilers are plugged in by name: ``model`` (default, schedule/model.py) and ``dory`` (the seed-001
CP-SAT tiler, schedule/dory.py). A tiler is a function
``tile(nest: LoopNest, target: Target, module: Module) -> LayerSchedule`` that handles modules
computing from L1; layers that are never tiled (kind ``other``, modules computing from L2) get the
untiled schedule here, whatever the tiler. A tiler raises `TilewiseError` ("cannot fit: needs at
least N bytes of L1 ...") when nothing fits; the caller prefixes the layer name.

Module choice (MATCH, seed 003 §IV-B): every module of the target that runs the layer's kind is
scheduled and the one with the fewest predicted cycles wins, unless `module` names one.
"""

from __future__ import annotations

import importlib
from typing import Callable

from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..targets.base import Module, Target
from .cost import untiled_schedule
from .space import LayerSchedule

Tiler = Callable[[LoopNest, Target, Module], LayerSchedule]

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


def schedule_layer(nest: LoopNest, target: Target, tiler: str = "model",
                   module: str | Module | None = None) -> LayerSchedule:
    """The schedule of one layer on `target` (fastest module unless `module` is given)."""
    if module is None:
        mods = target.modules_for(nest.kind)
        if not mods:
            raise TilewiseError(f"no module of target {target.name} runs {nest.kind} layers")
    else:
        m = target.module(module) if isinstance(module, str) else module
        if not m.runs(nest.kind):
            raise TilewiseError(f"module {m.name} of target {target.name} does not run "
                                f"{nest.kind} layers")
        mods = (m,)
    fn = get_tiler(tiler)
    found: list[LayerSchedule] = []
    errors: list[TilewiseError] = []
    for m in mods:
        try:
            if nest.kind == "other" or m.memory != "L1" or target.outer(m.memory) is None:
                outer = target.outer(m.memory) if nest.kind == "other" else None
                found.append(untiled_schedule(nest, target, m, tiler=tiler,
                                              level=outer.name if outer else None))
            else:
                found.append(fn(nest, target, m))
        except TilewiseError as e:
            errors.append(e)
    if not found:
        raise errors[0]
    return min(found, key=lambda s: s.cycles)
