"""Built-in PULP targets with a chosen kernel family on their cluster, for the tests.

`pulp_target` gives the target with its cluster on the pulp family (bindings/pulp) priced by the
module's own cost model — the built-in gap8 and pulp-open already are; gap9 still lists the
portable family. `portable_target` gives it on the portable family priced by PULP-NN's model
(bindings/portable/cost.py), for the tests about that family's layouts and C on a PULP target."""

from __future__ import annotations

from dataclasses import replace

from tilewise.bindings import portable, pulp
from tilewise.bindings.portable.cost import PulpNN
from tilewise.targets.base import Target
from tilewise.targets.registry import get_target


def _with_cluster(t: Target, bindings) -> Target:
    modules = tuple(replace(m, bindings=bindings(m)) if m.name == "cluster" else m
                    for m in t.modules)
    return replace(t, modules=modules)


def pulp_target(name: str = "gap8", **overrides) -> Target:
    """Target `name` (with get_target's overrides: l1_kb, cores ...) on the pulp family."""
    return _with_cluster(get_target(name, **overrides),
                         lambda m: pulp.bindings(m.bindings[0].cost))


def portable_target(name: str = "gap8", **overrides) -> Target:
    """Target `name` (with get_target's overrides) on the portable family, priced by PULP-NN."""
    return _with_cluster(get_target(name, **overrides), lambda m: portable.bindings(PulpNN()))


def match_gap9(**overrides) -> Target:
    """gap9 with its cluster priced as MATCH's GAP9 model prices PULP-NN (targets/gap9.py
    MATCH_TARGET), with get_target's overrides: for the tests of that peer model."""
    from tilewise.targets import gap9

    return gap9.MATCH_TARGET.with_overrides(**overrides)


def cmsis_stm32h7(**overrides) -> Target:
    """stm32h7 with its core priced by the CMSIS-NN model (bindings/portable/cost.py CmsisNN), on the
    portable family: for the tests of that peer model (seed 004's GAP8 vs STM32H7 ratio)."""
    from tilewise.bindings.portable.cost import CmsisNN

    t = get_target("stm32h7", **overrides)
    modules = tuple(replace(m, bindings=portable.bindings(CmsisNN())) for m in t.modules)
    return replace(t, modules=modules)


def tiled(name: str, **overrides) -> Target:
    """Target `name` with get_target's overrides, its modules tiling into their L1 even where the
    built-in one computes in place (stm32h7's Cortex-M7 copying tiles into its DTCM): for the
    tests of the tilers and the cost model on that part's L1."""
    t = get_target(name, **overrides)
    return replace(t, modules=tuple(replace(m, memory="L1") if t.has_memory("L1") else m
                                    for m in t.modules))
