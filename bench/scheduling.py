"""The compiler front half as the benchmarks call it: model file → LayerGraph → NetworkSchedule.

Thin wrappers over the public pipeline (`frontend.load_model`, `passes.lower`,
`pipeline.schedule_network`, `targets.registry.get_target`) so every table schedules the
same way `tilewise analyze MODEL --target T --tiler X` does. `cluster_only` restricts a target to
its 8-core cluster (seed 003 Table IV's "cluster+CPU" configuration: no NE16, no FC-core layers).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from tilewise.frontend import load_model
from tilewise.ir.layer import LayerGraph
from tilewise.passes import lower
from tilewise.pipeline import NetworkSchedule, schedule_network
from tilewise.targets.base import Target
from tilewise.targets.registry import get_target

TILERS = ("model", "dory")


@cache
def lowered(path: Path) -> LayerGraph:
    """The lowered network of a model file (cached: the frontend is not what tables 4/5 measure)."""
    return lower(load_model(path))


def target(name: str, l1_kb: float | None = None, cluster_only: bool = False, **kw) -> Target:
    t = get_target(name, l1_kb=l1_kb, **kw)
    if cluster_only:
        t = replace(t, modules=(t.module("cluster"),))
    return t


def schedule(lg: LayerGraph, tgt: Target, tiler: str) -> NetworkSchedule:
    return schedule_network(lg, tgt, tiler)
