"""Every module of tilewise imports first, in a fresh interpreter: no import cycle between the
stages (bindings are listed by targets, and read the IR, the golden model and codegen's
templates; partition and schedule read targets and bindings).

"Fresh" as far as tilewise goes: a runner imports the third-party packages tilewise uses (numpy,
onnx, ... — none of them imports tilewise), then forks one child per module, so each child starts
with no tilewise module loaded and pays for tilewise's own imports only (a new interpreter per
module took ~100 s of CI for ~200 modules, mostly numpy's and onnx's imports again each time).

The children are forked as a tree of the packages: importing `a.b.c` first is importing `a`,
then `a.b`, then `a.b.c`'s own code (Python imports a module's parent packages first), so the
child of `a.b.c` is forked from the child that imported `a.b` first — the same state — instead of
importing `a` and `a.b` again (tilewise.validate's ~30 modules each paid its package's ~1 s).
When a package fails, each module under it is tried from the package's parent as before. The
runner writes the bytecode it compiles to a temporary folder (sys.pycache_prefix), so a module is
compiled once, not in every child, when the environment says PYTHONDONTWRITEBYTECODE (CI's).
(~66 s of CI before; the flat loop that still runs under a failed package is the old one.)"""

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

# imports those packages, then imports each module in a forked child: a module's child is forked
# from its package's (module docstring); exit status 1: the module failed, 2: one under it did
RUNNER = ("import importlib, os, sys\n"
          "top, cache, pre, mods = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]\n"
          "sys.pycache_prefix, sys.dont_write_bytecode = cache, False\n"
          "for p in pre:\n"
          "    try:\n"
          "        importlib.import_module(p)\n"
          "    except Exception:\n"
          "        pass\n"
          "assert not [k for k in sys.modules if k.split('.')[0] == top]\n"
          "kids = {}\n"
          "for m in mods:\n"
          "    up = m.rpartition('.')[0]\n"
          "    while up and up not in mods:\n"
          "        up = up.rpartition('.')[0]\n"
          "    kids.setdefault(up, []).append(m)\n"
          "def under(m):\n"
          "    return [d for k in kids.get(m, ()) for d in (k, *under(k))]\n"
          "def first(m, tree):\n"
          "    pid = os.fork()\n"
          "    if pid == 0:\n"
          "        try:\n"
          "            importlib.import_module(m)\n"
          "        except BaseException as e:\n"
          "            print(f'{m}: {type(e).__name__}: {e}', flush=True)\n"
          "            os._exit(1)\n"
          "        os._exit(2 if tree and visit(m) else 0)\n"
          "    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
          "def visit(m):\n"
          "    bad = False\n"
          "    for k in kids.get(m, ()):\n"
          "        rc = first(k, True)\n"
          "        bad = bad or rc != 0\n"
          "        if rc == 1:\n"
          "            for d in under(k):\n"
          "                first(d, False)\n"
          "    return bad\n"
          "bad = visit('')\n"
          "print('failed' if bad else 'all imported first', flush=True)\n"
          "sys.exit(1 if bad else 0)\n")


def imports_first(cwd: Path, top: str, modules: list[str], cache: Path) -> subprocess.CompletedProcess:
    """Run RUNNER on `modules` of package `top` (bytecode in `cache`)."""
    pre = subprocess.run([sys.executable, "-c", THIRD_PARTY, top, *modules], capture_output=True,
                         text=True, cwd=cwd, timeout=600)
    assert pre.returncode == 0, pre.stderr
    return subprocess.run([sys.executable, "-c", RUNNER, top, str(cache), pre.stdout, *modules],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


def test_every_module_imports_first(tmp_path):
    assert len(MODULES) > 60
    r = imports_first(REPO, "tilewise", MODULES, tmp_path / "pyc")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "all imported first", r.stdout


def test_the_check_catches_a_cycle(tmp_path):
    """A package whose a and b import each other's names: each fails to import first; c, which
    imports neither, passes (each child starts without the package)."""
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import json\nfrom cyc.b import B\nA = 1\n")
    (pkg / "b.py").write_text("from .a import A\nB = 2\n")
    (pkg / "c.py").write_text("import json\nC = 3\n")
    r = imports_first(tmp_path, "cyc", module_names(pkg), tmp_path / "pyc")
    assert r.returncode == 1
    assert "cyc.a: ImportError" in r.stdout and "cyc.b: ImportError" in r.stdout
    assert "cyc.c:" not in r.stdout


def test_the_check_tries_each_module_under_a_failed_package(tmp_path):
    """A package whose __init__ fails: each of its modules is tried (and fails) on its own, and a
    module of a subpackage that imports first is reached through the tree of children."""
    pkg = tmp_path / "tree"
    (pkg / "bad").mkdir(parents=True)
    (pkg / "good" / "deep").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "bad" / "__init__.py").write_text("raise ValueError('broken package')\n")
    (pkg / "bad" / "x.py").write_text("X = 1\n")
    (pkg / "good" / "__init__.py").write_text("")
    (pkg / "good" / "deep" / "__init__.py").write_text("")
    (pkg / "good" / "deep" / "y.py").write_text("from tree.good.deep.z import Z\nY = 1\n")
    (pkg / "good" / "deep" / "z.py").write_text("from tree.good.deep.y import Y\nZ = 2\n")
    r = imports_first(tmp_path, "tree", module_names(pkg), tmp_path / "pyc")
    assert r.returncode == 1
    assert sorted(ln.split(":")[0] for ln in r.stdout.splitlines()) == [
        "failed", "tree.bad", "tree.bad.x", "tree.good.deep.y", "tree.good.deep.z"], r.stdout
    assert "broken package" in r.stdout
