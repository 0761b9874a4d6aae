"""Build tilewise's shipped C (tilewise/codegen/c) with the system compiler for the C tests.

`build_shared(name, sources, ...)` compiles once per process into a temporary directory and returns
the shared library's path; `compile_objects` compiles without linking (syntax / warning checks).
Every build uses the flags the generated projects promise to be clean under: C99, -Wall -Wextra
-Werror (plus -pedantic here).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
C_ROOT = REPO / "tilewise" / "codegen" / "c"
KERNELS = REPO / "tilewise" / "bindings" / "portable" / "c"
PULP = REPO / "tilewise" / "bindings" / "pulp" / "c"
HAL = C_ROOT / "tw_hal"
TESTS_C = REPO / "tests" / "c"
PMSIS_STUB = REPO / "tests" / "pmsis_stub"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]

_BUILD_DIR: Path | None = None
_CACHE: dict[tuple, Path] = {}


def cc() -> str:
    return os.environ.get("CC", "cc")


def build_dir() -> Path:
    global _BUILD_DIR
    if _BUILD_DIR is None:
        _BUILD_DIR = Path(tempfile.mkdtemp(prefix="tw_c_"))
        atexit.register(shutil.rmtree, _BUILD_DIR, True)
    return _BUILD_DIR


def kernel_sources() -> list[Path]:
    return sorted(KERNELS.glob("*.c"))


def pulp_sources() -> list[Path]:
    return sorted(PULP.glob("*.c"))


def run_cc(args: list[str]) -> None:
    run_cmd([cc(), *args])


def run_cmd(args: list[str]) -> None:
    """Run a compiler command line; an AssertionError with its output when it fails."""
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)}\n{proc.stdout}{proc.stderr}")


#: folders of shipped C whose objects the firmware builds of the tests take from the object cache
CACHED_DIRS = (KERNELS, PULP, HAL)


def compile_object(args: list[str], src: Path, obj: Path) -> None:
    """Run the compile command `args` (which writes `src`'s object to `obj`); for a shipped kernel
    or HAL file, through the run's object cache (tilewise/validate/build.py `compile_cached`, in
    $TILEWISE_CC_CACHE, which conftest.py sets), keyed by the source, every header of the shipped
    folders, any `-include`d file and the command without its paths."""
    from tilewise.validate.build import compile_cached

    cache = os.environ.get("TILEWISE_CC_CACHE")
    if not cache or src.parent not in CACHED_DIRS:
        run_cmd(args)
        return
    digest = hashlib.sha256()
    forced = [Path(args[i + 1]) for i, a in enumerate(args[:-1]) if a == "-include"]
    for h in [*(h for d in CACHED_DIRS for h in sorted(d.glob("*.h"))), *forced]:
        digest.update(h.name.encode() + h.read_bytes())
    try:
        compile_cached(args, src, obj, digest.digest(), Path(cache), Path.cwd())
    except Exception as e:          # BuildError: the compiler's output, as run_cmd gives it
        raise AssertionError(str(e)) from None


def build_shared(name: str, sources: list[Path], includes: list[Path], extra: tuple[str, ...] = ()) -> Path:
    key = (name, tuple(sources), tuple(includes), extra)
    if key not in _CACHE:
        out = build_dir() / f"lib{name}.so"
        args = [*CFLAGS, "-O2", "-fPIC", "-shared", "-pthread", *extra]
        args += [f"-I{p}" for p in includes]
        args += [str(s) for s in sources] + ["-o", str(out), "-lm"]
        run_cc(args)
        _CACHE[key] = out
    return _CACHE[key]


def build_executable(name: str, sources: list[Path], includes: list[Path], extra: tuple[str, ...] = ()) -> Path:
    out = build_dir() / name
    args = [*CFLAGS, "-pthread", *extra, *[f"-I{p}" for p in includes]]
    args += [str(s) for s in sources] + ["-o", str(out), "-lm"]
    run_cc(args)
    return out


def compile_objects(sources: list[Path], includes: list[Path], extra: tuple[str, ...] = ()) -> None:
    for src in sources:
        args = [*CFLAGS, *extra, *[f"-I{p}" for p in includes], "-c", str(src),
                "-o", str(build_dir() / (src.stem + ".o"))]
        run_cc(args)
