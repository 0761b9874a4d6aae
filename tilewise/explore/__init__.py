"""`tilewise explore`: design-space sweeps of hypothetical chips (issue 14, DESIGN.md).

A sweep is a grid of points (grid.py): model × L1 × L2 × cores × clock × tiler × module set.
Each point is predicted as `tilewise analyze --target` predicts (point.py: the lowered graph
through `pipeline.schedule_network`), or measured where the target has a runner; a point
that cannot fit is a row with its reason. Results are cached per point (cache.py) so an
interrupted sweep resumes; points run on a local process pool or a Dask scheduler (runner.py);
the outputs are CSV/JSON (outputs.py), the Pareto fronts (pareto.py), plots (plots.py) and an
HTML page (html.py); sweep.py `explore` is the whole command.
"""

from __future__ import annotations

from .sweep import SweepResult, explore

__all__ = ["SweepResult", "explore"]
