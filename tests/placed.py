"""Placements for bare loop nests in the scheduler's tests (the networks' come from partition).

`placed(target, nest, module)`: the module's binding for the nest's geometry
(schedule/placement.py `nest_placement`). `seed002(target)`: the IDSP kernel as seed 002 models it —
16-bit partial sums spilled to external memory between input-channel tiles, no per-channel
constants — which tilewise has no C for (no built-in module carries it: partition can never
choose it); the seed-002 studies and the scheduler's spill paths are tested with it.
`cost_model(module)`: the kernel cost model the module's bindings share.
"""

from __future__ import annotations

from dataclasses import replace

from tilewise.bindings.base import Binding, BindingKey, Family, Precision, TileRules
from tilewise.ir.layer import LoopNest
from tilewise.schedule.placement import Placement, nest_placement
from tilewise.targets.base import Module, Target

SEED002 = Family("seed002", c_dir=None, project_dir="", header="")  # type: ignore[arg-type]


def placed(target: Target, nest: LoopNest, module: str | Module | None = None) -> Placement:
    return nest_placement(target, nest, module)


def cost_model(module: Module):
    return module.bindings[0].cost


def _no_c(*_args) -> str:
    raise AssertionError("the seed-002 study binding has no C")


def seed002(target: Target, nest: LoopNest, module: str = "dsp") -> Placement:
    """The seed-002 DSP kernel: psums of 16 bits that may leave L1, no per-channel constants."""
    m = target.module(module)
    b = Binding(family=SEED002, name=f"{nest.kind}_seed002",
                key=BindingKey(nest.kind, None, Precision(nest.x_bits, nest.w_bits, nest.y_bits, 16),
                               nest.kind),
                cost=cost_model(m), check=lambda layer, lg: None, emit=_no_c,
                psum_bits=16, psum_spill=True)
    return Placement(m, b, TileRules())


def with_cost(module: Module, **changes) -> Module:
    """The module with its bindings priced by its cost model with `changes` applied."""
    from tilewise.bindings import portable

    return replace(module, bindings=portable.bindings(replace(cost_model(module), **changes)))
