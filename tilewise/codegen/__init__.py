"""Code generation: a NetworkSchedule → a self-contained, malloc-free C project (DESIGN.md
"Generated C project"). `generate(ns, out_dir)` plans it (pure: `plan_project`, `render`) and
writes it; the shipped runtime (HAL, tile DMA helpers) lives in codegen/c/ and each kernel
family's C in its bindings folder, copied into the projects that use them. `generate_model` is
the whole of `tilewise generate`: load, lower, partition and schedule, generate."""

from __future__ import annotations

from pathlib import Path

from .project import Project, ProjectPlan, generate, load_project, plan_project, render, write_project


def generate_model(model: str | Path, target, tiler: str, out_dir: str | Path,
                   objective: str = "latency"):
    """Load `model`, lower, partition and schedule it on `target` with `tiler`, write the project
    to `out_dir`; returns (Project, NetworkSchedule)."""
    from ..frontend import load_model
    from ..passes import lower
    from ..schedule.network import schedule_network

    ns = schedule_network(lower(load_model(model)), target, tiler, objective=objective)
    return generate(ns, out_dir, model_name=Path(model).name), ns


__all__ = ["generate", "generate_model", "load_project", "plan_project", "render",
           "write_project", "Project", "ProjectPlan"]
