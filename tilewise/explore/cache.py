"""Per-point results on disk, so an interrupted sweep resumes where it stopped.

A point's key is the sha256 of (the model's bytes' sha256, the target, the point's settings — L1,
L2, cores, clock, module set, objective, measure —, its tiler, the tilewise version and a digest of
every file of the installed tilewise package — Python, C kernels and headers, jinja templates,
linker scripts, assembly, data: `code_digest`, hashed once per process): the same point on the
same code is computed once, and a change of the code (a cost model, a tiler, a kernel a
`--measure` row ran) invalidates every entry. Each result is one JSON file
DIR/cache/<key>.json, written to a temporary file in the same directory and renamed
(`os.replace`, atomic on POSIX), so a sweep killed mid-write leaves either the whole entry or none.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from .. import __version__
from .grid import Point

#: directories of the package that hold no input of a result (bytecode caches)
_SKIP_DIRS = {"__pycache__"}


def code_files(root: Path) -> list[Path]:
    """Every file under `root` a result can depend on, sorted: the Python sources, and the C
    kernels, headers, jinja templates, linker scripts, assembly and data files shipped with them
    — all regular files, bytecode caches and hidden files aside."""
    return sorted(f for f in root.rglob("*")
                  if f.is_file() and not f.name.startswith(".") and f.suffix not in (".pyc", ".pyo")
                  and not _SKIP_DIRS.intersection(f.relative_to(root).parts))


def tree_digest(root: Path) -> str:
    """sha256 over `code_files(root)`, each file's path relative to `root` and its bytes."""
    h = hashlib.sha256()
    for f in code_files(root):
        rel = f.relative_to(root).as_posix().encode()
        data = f.read_bytes()
        h.update(len(rel).to_bytes(4, "little") + rel + len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """`tree_digest` of the installed tilewise package, computed once per process (~3 MB)."""
    return tree_digest(Path(__file__).resolve().parent.parent)


def point_key(p: Point) -> str:
    """The cache key of a point (module docstring)."""
    blob = json.dumps({"point": p.settings(), "tilewise": __version__, "code": code_digest()},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class Cache:
    """The directory of cached rows, DIR/cache/."""

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir) / "cache"
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The cached row, or None (absent, or unreadable: then it is recomputed)."""
        try:
            return json.loads(self.path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, row: dict) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{key}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(row, f, sort_keys=True)
            os.replace(tmp, self.path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.dir.glob("*.json"))
