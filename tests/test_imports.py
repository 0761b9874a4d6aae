"""Every module of tilewise imports first, in a fresh interpreter: no import cycle between the
stages (bindings are listed by targets, and read the IR, the golden model and codegen's
templates; partition and schedule read targets and bindings)."""

from __future__ import annotations

import subprocess
import sys

from .conftest import REPO

MODULES = sorted(
    ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
    for p in (REPO / "tilewise").rglob("*.py"))


def test_every_module_imports_first():
    code = ("import importlib, subprocess, sys\n"
            "bad = []\n"
            "for m in sys.argv[1:]:\n"
            "    r = subprocess.run([sys.executable, '-c', f'import {m}'], capture_output=True, "
            "text=True)\n"
            "    if r.returncode:\n"
            "        bad.append((m, r.stderr.strip().splitlines()[-1]))\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    r = subprocess.run([sys.executable, "-c", code, *MODULES], capture_output=True, text=True,
                       cwd=REPO, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(MODULES) > 60
