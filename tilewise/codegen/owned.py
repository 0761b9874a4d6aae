"""Which files of a project directory tilewise wrote, so that writing a project again never
deletes a file of the user's (nor, without --force, writes into a directory of the user's).

`write_project` records every file it writes in RECORD (one relative path per line) beside the
manifest. Writing into the same directory again deletes only the recorded files the new project
no longer has (a smaller network's layer_NN.c, a kernel family no longer chosen) and leaves
everything else in place; of a project written before the record existed, only the layer files
and the L3 image its manifest names (`recorded`).

`check_out_dir` is the command line's guard, before any work: an -o directory that exists, is
not empty and holds no tilewise project (no tilewise.json) is refused unless --force, which
writes into it all the same (files of the generated names are overwritten, nothing is deleted).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from pathlib import Path

from ..errors import TilewiseError

#: the record of the files tilewise wrote into a project directory
RECORD = ".tilewise_files"
MANIFEST = "tilewise.json"


def is_project(path: Path) -> bool:
    """A directory holding a project tilewise wrote (its manifest)."""
    return (path / MANIFEST).is_file()


def check_out_dir(path: Path, label: str, force: bool = False) -> None:
    """Refuse (TilewiseError, the message starting with `label`, e.g. "-o DIR") an existing,
    non-empty directory that is not a tilewise project, unless `force`."""
    if force or not path.is_dir() or is_project(path):
        return
    try:
        empty = next(path.iterdir(), None) is None
    except OSError:
        return   # unreadable: the writability probe of the caller says why
    if not empty:
        raise TilewiseError(f"{label}: the directory is not empty and holds no tilewise "
                            f"project (no {MANIFEST}); give a new or empty directory, or add "
                            f"--force to write into it (files of the same names are overwritten, "
                            f"no other file is deleted)")


def recorded(out: Path) -> set[str]:
    """The files the record says tilewise wrote into `out`; without a record (a project of an
    earlier tilewise), those its manifest names: the layers' files (the Makefile compiles every
    layers/*.c, so a larger network's leftovers would break the build) and the L3 image."""
    try:
        return {line for line in (out / RECORD).read_text().splitlines() if line}
    except OSError:
        pass
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        files = {layer["file"] for layer in manifest.get("layers", ()) if "file" in layer}
        return files | ({"weights_l3.bin"} if manifest.get("l3_bytes") else set())
    except (OSError, ValueError, TypeError, AttributeError):
        return set()


def write_record(out: Path, files: Iterable[str]) -> None:
    (out / RECORD).write_text("".join(f"{f}\n" for f in sorted(files)))


def remove_stale(out: Path, new: Iterable[str]) -> None:
    """Delete the recorded files of `out` that the new project does not write, then the folders
    that leaves empty; files tilewise did not write are never touched."""
    keep = set(new)
    out_resolved = out.resolve()
    for rel in sorted(recorded(out) - keep):
        path = out / rel
        try:   # a record edited to point outside the project is ignored
            path.resolve().relative_to(out_resolved)
        except (OSError, ValueError):
            continue
        if path.is_file() or path.is_symlink():
            path.unlink()
            parent = path.parent
            while parent != out:
                with contextlib.suppress(OSError):
                    parent.rmdir()   # only when empty
                parent = parent.parent
