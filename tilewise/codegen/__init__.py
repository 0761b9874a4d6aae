"""Code generation: a NetworkSchedule → a self-contained, malloc-free C project (DESIGN.md
"Generated C project"). `generate(ns, out_dir)` plans it (pure: `plan_project`, `render`) and
writes it; the C is written from jinja2 templates (tilewise/templating.py; codegen/templates/*.j2,
and a kernel family's own in its bindings folder); the shipped runtime (HAL, tile DMA helpers)
lives in codegen/c/ and each kernel family's C in its bindings folder, copied into the projects
that use them. `generate_model` is the whole of `tilewise generate`: the pipeline
(tilewise/pipeline.py `compile`), then generate."""

from __future__ import annotations

from pathlib import Path

from .project import Project, ProjectPlan, generate, load_project, plan_project, render, write_project


def generate_model(model: str | Path, target, tiler: str, out_dir: str | Path,
                   objective: str = "latency", c_name: str = "tw",
                   input_dtypes: dict[str, str] | None = None, ram_budget: int | None = None):
    """Compile `model` on `target` (pipeline.compile: its container inputs' code types
    `input_dtypes`, the `tiler`, the `objective`, the `ram_budget` in bytes), write the project to `out_dir`
    with C names prefixed `c_name` (names.py); returns (Project, NetworkSchedule)."""
    from ..pipeline import Options, compile
    from .names import check_name

    check_name(c_name)
    ns = compile(model, target, Options(tiler=tiler, objective=objective,
                                        input_dtypes=dict(input_dtypes or {}),
                                        ram_budget=ram_budget))
    return generate(ns, out_dir, model_name=Path(model).name, c_name=c_name), ns


__all__ = ["generate", "generate_model", "load_project", "plan_project", "render",
           "write_project", "Project", "ProjectPlan"]
