"""The lint configuration in pyproject.toml ([tool.ruff]) holds: `ruff check` over the package, the
tests and the bench is clean (issue 26). ruff is pinned in the dev extra; this runs the interpreter's
own (`python -m ruff`), so the version is the pinned one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_check_is_clean():
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "tilewise", "tests", "bench"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, f"ruff check failed (exit {run.returncode}):\n{run.stdout}{run.stderr}"
