"""Every module of tilewise imports first, in a fresh interpreter: no import cycle between the
stages (bindings are listed by targets, and read the IR, the golden model and codegen's
templates; partition and schedule read targets and bindings).

"Fresh" as far as tilewise goes: a runner imports the third-party packages tilewise uses (numpy,
onnx, ... — none of them imports tilewise), then forks one child per module, so each child starts
with no tilewise module loaded and pays for tilewise's own imports only (a new interpreter per
module took ~100 s of CI for ~200 modules, mostly numpy's and onnx's imports again each time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def module_names(root: Path) -> list[str]:
    """Dotted names of the modules under package root (root's parent on sys.path)."""
    return sorted(".".join(p.relative_to(root.parent).with_suffix("").parts)
                  .removesuffix(".__init__") for p in root.rglob("*.py"))


MODULES = module_names(REPO / "tilewise")

# prints the top-level packages other than the checked one that importing its modules loads
THIRD_PARTY = ("import importlib, sys\n"
               "top = sys.argv[1]\n"
               "for m in sys.argv[2:]:\n"
               "    try:\n"
               "        importlib.import_module(m)\n"
               "    except Exception:\n"
               "        pass\n"
               "print(' '.join(sorted({k.split('.')[0] for k in sys.modules\n"
               "                       if k.split('.')[0] != top})))\n")

# imports those packages, then imports each module in a forked child
RUNNER = ("import importlib, os, sys\n"
          "top, pre, mods = sys.argv[1], sys.argv[2].split(), sys.argv[3:]\n"
          "for p in pre:\n"
          "    try:\n"
          "        importlib.import_module(p)\n"
          "    except Exception:\n"
          "        pass\n"
          "assert not [k for k in sys.modules if k.split('.')[0] == top]\n"
          "bad = []\n"
          "for m in mods:\n"
          "    pid = os.fork()\n"
          "    if pid == 0:\n"
          "        try:\n"
          "            importlib.import_module(m)\n"
          "        except BaseException as e:\n"
          "            print(f'{m}: {type(e).__name__}: {e}', flush=True)\n"
          "            os._exit(1)\n"
          "        os._exit(0)\n"
          "    if os.waitpid(pid, 0)[1]:\n"
          "        bad.append(m)\n"
          "print('failed:', bad)\n"
          "sys.exit(1 if bad else 0)\n")


def imports_first(cwd: Path, top: str, modules: list[str]) -> subprocess.CompletedProcess:
    pre = subprocess.run([sys.executable, "-c", THIRD_PARTY, top, *modules], capture_output=True,
                         text=True, cwd=cwd, timeout=600)
    assert pre.returncode == 0, pre.stderr
    return subprocess.run([sys.executable, "-c", RUNNER, top, pre.stdout, *modules],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


def test_every_module_imports_first():
    assert len(MODULES) > 60
    r = imports_first(REPO, "tilewise", MODULES)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_check_catches_a_cycle(tmp_path):
    """A package whose a and b import each other's names: each fails to import first; c, which
    imports neither, passes (each child starts without the package)."""
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import json\nfrom cyc.b import B\nA = 1\n")
    (pkg / "b.py").write_text("from .a import A\nB = 2\n")
    (pkg / "c.py").write_text("import json\nC = 3\n")
    r = imports_first(tmp_path, "cyc", module_names(pkg))
    assert r.returncode == 1
    assert "cyc.a: ImportError" in r.stdout and "cyc.b: ImportError" in r.stdout
    assert "cyc.c:" not in r.stdout
