"""Build a generated project with the system C compiler (DESIGN.md "Verification").

The host build is what the project's Makefile does: `cc -O2 -std=c99 -Wall -Wextra -Werror
-pthread`, the host HAL, `-lm`; `dump=True` adds -DTW_DUMP_LAYERS (validate's per-layer mode),
`sanitize=True` builds with -fsanitize=address,undefined at -O1 (the sanitizers' customary level:
instrumented code takes far longer to compile at -O2). With a `cache` directory the sources
every project shares (kernels, tile helpers, host HAL) are compiled once per content and flags
and reused — tests build many projects, and every validate of a user rebuilds the same kernel
families (ad_autoencoder on gap9: 9.9 s cold, 4.0 s cached). Without an explicit `cache`,
$TILEWISE_CC_CACHE names one (set but empty: no cache), else the user's cache directory
($XDG_CACHE_HOME or ~/.cache, /tilewise/cc); one that cannot be written is left out with a
one-line note (the build works without it); objects are keyed by their
source, the shared headers, the compiler and its flags, so a stale one is never reused. Compiler errors raise BuildError
with the compiler's output (a generated project must compile cleanly: that is a tilewise bug, not a user error).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..codegen.project import Project
from ..errors import TilewiseError

CFLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")
SANITIZE = ("-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all")
#: project folders that are copies of the shipped runtime (cacheable across projects), besides
#: the kernel families' folders the project lists
RUNTIME_DIRS = ("tw_runtime", "tw_hal")


class BuildError(Exception):
    """The C compiler rejected a generated project (a tilewise bug; the message has its output)."""


def compiler() -> str:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise TilewiseError(f"no C compiler found ('{cc}'); install gcc or clang, or set CC")
    return cc


def _run(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"{' '.join(args)}\n{proc.stdout}{proc.stderr}")


def flags(opt: str = "-O2", dump: bool = False, sanitize: bool = False,
          defines: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> list[str]:
    f = ["-O1" if sanitize else opt, *CFLAGS, *extra, "-pthread"]
    if sanitize:
        f += list(SANITIZE)
    if dump:
        f.append("-DTW_DUMP_LAYERS")
    return f + [f"-D{d}" for d in defines]


def default_cache() -> Path | None:
    """The object cache when none is given (module docstring); None: build everything. A cache
    directory that cannot be created or written (read-only, full, a file) is left out: the build
    goes on without it, said in a one-line note."""
    env = os.environ.get("TILEWISE_CC_CACHE")
    if env is not None:
        return _usable_cache(Path(env), "TILEWISE_CC_CACHE") if env else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return _usable_cache(Path(base) / "tilewise" / "cc", None)


#: the cache directories already said to be unusable (one note per directory and process)
_NOTED: set[Path] = set()


def _usable_cache(path: Path, variable: str | None) -> Path | None:
    """`path` when objects can be written there (probed: access() says yes to root on a
    read-only mount or a mode-555 directory), else None and a note (once per directory)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe_", dir=path)
        os.close(fd)
        os.unlink(probe)
        return path
    except OSError as e:
        if path not in _NOTED:
            _NOTED.add(path)
            what = f"{variable}={path}" if variable else f"the compile cache {path}"
            print(f"tilewise: note: {what} cannot be written ({e.strerror or e}); building "
                  f"without the compile cache (set TILEWISE_CC_CACHE to a writable directory, "
                  f"or empty for none)", file=sys.stderr)
        return None


def headers_digest(includes: list[str], shared: set[str]) -> bytes:
    """One digest of every header of the shared folders (part of each cached object's key)."""
    key = hashlib.sha256()
    for inc in sorted(Path(i) for i in includes if Path(i).name in shared):
        for h in sorted(inc.glob("*.h")):
            key.update(h.name.encode() + h.read_bytes())
    return key.digest()


def cached_object(src: Path, key_args: list[str], headers: bytes, cache: Path,
                  compile_to: Callable[[str], list[str]], cwd: Path | None = None) -> Path:
    """The object of `src` in `cache`, compiled by the command `compile_to(object_path)` unless
    an object of the same source, shared headers (`headers`, see headers_digest) and
    `key_args` (the compiler and its flags, without project paths) is there already."""
    key = hashlib.sha256()
    key.update(src.read_bytes())
    key.update(headers)
    key.update(" ".join(key_args).encode())
    obj = cache / f"{src.stem}-{key.hexdigest()[:20]}.o"
    if not obj.exists():
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".o", dir=cache)
        os.close(fd)
        try:
            _run(compile_to(tmp), cwd or cache)
            os.replace(tmp, obj)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return obj


def compile_cached(args: list[str], src: Path, obj: Path, headers: bytes, cache: Path,
                   cwd: Path) -> None:
    """Run the compile command `args` (which writes `src`'s object to `obj`) through the cache:
    keyed by `args` without its -I options and the two paths (what the project's location
    changes), the source and `headers`; the object is copied to `obj`."""
    key = [a for a in args if not a.startswith("-I") and a not in (str(src), str(obj))]
    shutil.copyfile(cached_object(src, key, headers, cache,
                                  lambda o: [o if a == str(obj) else a for a in args], cwd), obj)


def build_host(project: Project, out: str | Path | None = None, *, opt: str = "-O2",
               dump: bool = False, sanitize: bool = False, defines: tuple[str, ...] = (),
               extra: tuple[str, ...] = (), cache: str | Path | None = None) -> Path:
    """Compile and link the host harness of `project`; returns the executable's path. `extra`
    flags come after the warning flags (e.g. -Wno-error=... for a hand-edited project)."""
    cc = compiler()
    fl = flags(opt, dump, sanitize, defines, extra)
    if cache is None:
        cache = default_cache()
    exe = Path(out) if out else project.path / ("network_host_dump" if dump else "network_host")
    includes = [str(p) for p in project.includes()]
    sources = project.sources()
    shared_dirs = {*RUNTIME_DIRS, *project.kernel_dirs}
    objects: list[str] = []
    rest: list[str] = []
    headers = headers_digest(includes, shared_dirs) if cache is not None else b""
    from ..progress import progress

    cached = [s for s in sources if cache is not None and s.parent.name in shared_dirs]
    with progress(len(cached) + 1, "building") as step:   # each cached object, then the rest
        for s in sources:
            if s in cached:
                objects.append(str(cached_object(
                    s, [cc, *fl], headers, Path(cache),
                    lambda o: [cc, *fl, *[f"-I{i}" for i in includes], "-c", str(s), "-o", o])))
                step()
            else:
                rest.append(str(s))
        _run([cc, *fl, *[f"-I{i}" for i in includes], *rest, *objects, "-o", str(exe), "-lm"],
             project.path)
        step()
    return exe


def compile_pulp(project: Project, pmsis_include: str | Path, out_dir: str | Path) -> list[Path]:
    """Compile (-c, no link) the variant of the project's platform HAL against the SDK's include
    directory (PMSIS for the GAP SDK; the shipped kernel and runtime files through the object
    cache, keyed by the SDK's headers too)."""
    from .firmware import project_platform

    platform = project_platform(project)
    if platform.sdk_include is None:
        raise TilewiseError(f"{project.path}: target {project.manifest['target']} has no PULP HAL")
    cc = compiler()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pmsis = Path(pmsis_include).resolve()
    includes = [str(pmsis), *[str(p) for p in project.includes()]]
    cache = default_cache()
    shared = {*RUNTIME_DIRS, *project.kernel_dirs}
    headers = b""
    if cache is not None:   # the shared folders' headers and the PMSIS headers key the objects
        headers = headers_digest(includes, shared) + hashlib.sha256(b"".join(
            h.name.encode() + h.read_bytes() for h in sorted(pmsis.rglob("*.h")))).digest()
    objs = []
    for s in project.sources(platform):
        obj = out / f"{s.parent.name}_{s.stem}.o"
        args = [cc, "-O2", *CFLAGS, *[f"-I{i}" for i in includes], "-c", str(s), "-o", str(obj)]
        if cache is not None and s.parent.name in shared:
            compile_cached(args, s, obj, headers, cache, project.path)
        else:
            _run(args, project.path)
        objs.append(obj)
    return objs
