"""Built-in targets whose cluster runs the pulp kernel family (bindings/pulp), for the tests: a copy
of the target with its cluster module's bindings replaced by `pulp.bindings(cost)` with the
module's own cost model (PulpNN), nothing else changed (the targets themselves still list the
portable family)."""

from __future__ import annotations

from dataclasses import replace

from tilewise.bindings import pulp
from tilewise.targets.base import Target
from tilewise.targets.registry import get_target


def pulp_target(name: str = "gap8", **overrides) -> Target:
    """Target `name` (with get_target's overrides: l1_kb, cores ...) on the pulp family."""
    t = get_target(name, **overrides)
    modules = tuple(replace(m, bindings=pulp.bindings(m.bindings[0].cost)) if m.name == "cluster"
                    else m for m in t.modules)
    return replace(t, modules=modules)
