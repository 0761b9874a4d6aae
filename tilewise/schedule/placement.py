"""`Placement`: the unit the scheduler works on — a module, one of its bindings, the tile rules.

Partition (tilewise/partition) chooses one placement per layer; the tilers and the cost model take
it instead of a bare module, so the schedule reads the binding's cost terms, scratch formula,
constants size, partial-sum bits and tile constraints, and never guesses them.

A placement is *untiled* when its kernel runs once on the whole L2 tensors: the binding says so
(ops the tiled loop nest does not run), or the module computes from L2 itself (gap9's FC core,
stm32h7's Cortex-M7, which reads its SRAM directly), or the module's memory has no outer level to
move tiles from. The whole input tensor is the kernel's input then (codegen/templates/layer.c.j2:
its row and column pitch are the tensor's). Untiled placements are never cut at
L3→L2 either (their kernels need the whole, dense tensors in L2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..bindings.base import Binding, TileRules
from ..errors import TilewiseError
from ..ir.layer import Layer, LoopNest
from ..targets.base import Module, Target


@dataclass(frozen=True)
class Placement:
    """Where and how one layer runs: `binding` on `module`, under `rules` (for that layer)."""

    module: Module
    binding: Binding
    rules: TileRules

    @property
    def untiled(self) -> bool:
        return self.rules.untiled

    @property
    def label(self) -> str:
        return f"{self.module.name}:{self.binding.label}"

    def fixing(self, **dims: int) -> Placement:
        """The same placement with some L1 tile sizes imposed (TileRules.fixed)."""
        return replace(self, rules=self.rules.with_fixed(**dims))


def computes_in_place(target: Target, module: Module) -> bool:
    """The module's kernels read and write its memory directly, with no tiles moved into it."""
    return module.memory != "L1" or target.outer(module.memory) is None


def place(target: Target, module: Module, binding: Binding, layer: Layer | None = None) -> Placement:
    """The placement of `binding` on `module` for `layer` (static rules without a layer)."""
    rules = binding.tiles if layer is None else binding.rules(layer)
    if computes_in_place(target, module) and not rules.untiled:
        rules = replace(rules, untiled=True, l3=False)
    return Placement(module, binding, rules)


def nest_placement(target: Target, nest: LoopNest, module: str | Module | None = None) -> Placement:
    """A placement for a bare loop nest (seed studies, tests, design sweeps): the first binding of
    the module (default: the target's first module that has one) whose geometry and input bits
    match the nest's."""
    if isinstance(module, str):
        module = target.module(module)
    mods = (module,) if module is not None else target.modules
    for m in mods:
        for b in m.bindings:
            if b.key.nest_kind == nest.kind and b.key.precision.x == nest.x_bits:
                return place(target, m, b)
    where = f"module {mods[0].name}" if module is not None else f"any module of {target.name}"
    raise TilewiseError(f"no binding of {where} runs a {nest.kind} loop nest of "
                        f"{nest.x_bits}-bit inputs")
