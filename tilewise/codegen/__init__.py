"""Code generation: a NetworkSchedule → a self-contained, malloc-free C project (DESIGN.md
"Generated C project"). `generate(ns, out_dir)` writes it; the shipped C library (kernels, HAL,
tile DMA helpers) lives in codegen/c/ and is copied into every project. `generate_model` is the
whole of `tilewise generate`: load, lower, schedule, generate."""

from __future__ import annotations

from pathlib import Path

from .project import PULP_TARGETS, Project, generate, load_project


def generate_model(model: str | Path, target, tiler: str, out_dir: str | Path):
    """Load `model`, lower and schedule it on `target` with `tiler`, write the project to
    `out_dir`; returns (Project, NetworkSchedule)."""
    from ..frontend import load_model
    from ..passes import lower
    from ..schedule.network import schedule_network

    ns = schedule_network(lower(load_model(model)), target, tiler)
    return generate(ns, out_dir, model_name=Path(model).name), ns


__all__ = ["generate", "generate_model", "load_project", "Project", "PULP_TARGETS"]
