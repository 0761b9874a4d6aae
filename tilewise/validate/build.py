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
source, the shared headers, the compiler and its flags, so a stale one is never reused. The
project's own sources (network.c, weights.c, layers/*.c, the harness) are compiled to objects in
the project's build_host/ folder, each rebuilt only when its source, the project's headers or
the flags change. A source whose text and quoted includes never name TW_DUMP_LAYERS is compiled
without it (kernels and layers: only network.c and the harness dump), so the plain build and the
dump build share its object (validate with the user's
data builds both, and microLlama's 546 layer files took ~35 s per build). Sources compile
`jobs()` at a time. Compiler errors raise BuildError
with the compiler's output (a generated project must compile cleanly: that is a tilewise bug, not a user error).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..codegen.project import Project
from ..errors import TilewiseError

CFLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")
SANITIZE = ("-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all")
#: project folders that are copies of the shipped runtime (cacheable across projects), besides
#: the kernel families' folders the project lists
RUNTIME_DIRS = ("tw_runtime", "tw_hal")
#: the define of the per-layer dump build (flags(dump=True))
DUMP_MACRO = "TW_DUMP_LAYERS"
#: the project folder of the host build's objects of the project's own sources
OBJ_DIR = "build_host"
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


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


def jobs() -> int:
    """Compiler processes run at once: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not Linux
        return max(1, os.cpu_count() or 1)


def run_parallel(commands: Sequence[Callable[[], object]], step: Callable[[], None]) -> list:
    """Call each of `commands` (each runs one compiler process), `jobs()` at a time; `step()`
    after each one ends; their results in order. The first failure is raised once every
    command has ended."""
    if len(commands) <= 1 or jobs() == 1:
        out = []
        for c in commands:
            out.append(c())
            step()
        return out
    with ThreadPoolExecutor(max_workers=jobs()) as pool:
        futures = {pool.submit(c): i for i, c in enumerate(commands)}
        for f in as_completed(futures):
            if f.exception() is None:
                step()
        return [f.result() for f in sorted(futures, key=futures.get)]


def names_macro(src: Path, dirs: Sequence[Path], macro: str, memo: dict[Path, bool]) -> bool:
    """Whether `src` or a file it includes with quotes (found beside it or in `dirs`, as the
    compiler searches) names `macro`; system headers (<...>, or quoted ones found in none of
    these) do not name a tilewise define. `memo` holds the files answered already."""
    if src in memo:
        return memo[src]
    memo[src] = False   # an include cycle: the other files of it answer
    text = src.read_text(errors="replace")
    found = macro in text
    for name in _INCLUDE.findall(text) if not found else ():
        hit = next((d / name for d in (src.parent, *dirs) if (d / name).is_file()), None)
        if hit is not None and names_macro(hit.resolve(), dirs, macro, memo):
            found = True
            break
    memo[src] = found
    return found


def project_object(src: Path, name: str, key_args: list[str], headers: bytes, objdir: Path,
                   compile_to: Callable[[str], list[str]], cwd: Path) -> Path:
    """The object of the project's own source `src` in `objdir` (one per source name and flags
    `key_args`), compiled by `compile_to(object_path)` unless it was compiled from the same
    source text and project headers (`headers`) already (the key file beside it says so)."""
    fl = hashlib.sha256(" ".join(key_args).encode()).hexdigest()[:12]
    obj = objdir / f"{name}-{fl}.o"
    stamp = obj.with_suffix(".key")
    key = hashlib.sha256(src.read_bytes() + headers + " ".join(key_args).encode()).hexdigest()
    if obj.exists() and stamp.exists() and stamp.read_text() == key:
        return obj
    stamp.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".o", dir=objdir)
    os.close(fd)
    try:
        _run(compile_to(tmp), cwd)
        os.replace(tmp, obj)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    stamp.write_text(key)
    return obj


def build_host(project: Project, out: str | Path | None = None, *, opt: str = "-O2",
               dump: bool = False, sanitize: bool = False, defines: tuple[str, ...] = (),
               extra: tuple[str, ...] = (), cache: str | Path | None = None) -> Path:
    """Compile and link the host harness of `project`; returns the executable's path. `extra`
    flags come after the warning flags (e.g. -Wno-error=... for a hand-edited project). The
    shared sources come from the object cache, the project's own from its build_host/ folder
    (module docstring)."""
    cc = compiler()
    fl = flags(opt, dump, sanitize, defines, extra)
    plain = flags(opt, False, sanitize, defines, extra)
    if cache is None:
        cache = default_cache()
    exe = Path(out) if out else project.path / ("network_host_dump" if dump else "network_host")
    dirs = project.includes()
    includes = [str(p) for p in dirs]
    inc = [f"-I{i}" for i in includes]
    sources = project.sources()
    shared_dirs = {*RUNTIME_DIRS, *project.kernel_dirs}
    headers = headers_digest(includes, shared_dirs) if cache is not None else b""
    own_headers = headers_digest(includes, {Path(i).name for i in includes})
    objdir = project.path / OBJ_DIR
    objdir.mkdir(exist_ok=True)
    memo: dict[Path, bool] = {}
    commands: list[Callable[[], Path]] = []
    for s in sources:
        f = fl if dump and names_macro(s.resolve(), dirs, DUMP_MACRO, memo) else plain
        if cache is not None and s.parent.name in shared_dirs:
            commands.append(lambda s=s, f=f: cached_object(
                s, [cc, *f], headers, Path(cache), lambda o: [cc, *f, *inc, "-c", str(s), "-o", o]))
        else:
            name = s.relative_to(project.path).as_posix().replace("/", "_")
            commands.append(lambda s=s, f=f, name=name: project_object(
                s, name, [cc, *f], own_headers, objdir,
                lambda o: [cc, *f, *inc, "-c", str(s), "-o", o], project.path))
    from ..progress import progress

    with progress(len(commands) + 1, "building") as step:   # each object, then the link
        objects = run_parallel(commands, step)
        _run([cc, *fl, *[str(o) for o in objects], "-o", str(exe), "-lm"], project.path)
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
