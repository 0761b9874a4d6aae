"""Output destinations named by options (`--report DIR`, `--layer-csv FILE`, `--metrics-csv FILE`)
checked before any work: a destination that is a directory where a file is wanted (or the other way
round), whose folder cannot be created (a file is in the way) or is not writable, is one sentence
(TilewiseError, exit 2) at once instead of after minutes of building and running. Missing folders
are created by the writers later, as for -o; the check itself leaves nothing behind (its probe is a
temporary directory removed at once).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import TilewiseError


def _nearest_existing(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _writable_place(folder: Path, option: str, given: str) -> None:
    """`folder` (the one the destination goes into) exists or can be created, and is writable."""
    base = _nearest_existing(folder)
    if not base.is_dir():
        raise TilewiseError(f"{option} {given}: cannot create it, {base} is a file, not a "
                            f"directory; choose another path")
    try:   # a probe: access() says yes to root on a read-only mount and on a mode-555 directory
        os.rmdir(tempfile.mkdtemp(prefix=".tilewise_probe_", dir=base))
    except OSError as e:
        where = "is not writable" if base == folder else f"cannot be created in {base}"
        raise TilewiseError(f"{option} {given}: {where} ({e.strerror or e}); choose another "
                            f"path") from None


def check_file_destination(given: str | None, option: str) -> None:
    """A FILE an option will write (None: the option was not given)."""
    if given is None:
        return
    p = Path(given).expanduser().absolute()
    if p.is_dir():
        raise TilewiseError(f"{option} {given}: is a directory; give a file name")
    if p.exists() and not p.is_file():
        raise TilewiseError(f"{option} {given}: is not a regular file; give a file name")
    if p.exists() and not os.access(p, os.W_OK):
        raise TilewiseError(f"{option} {given}: the file is not writable; choose another path")
    _writable_place(p.parent, option, given)


def check_report_destination(given: str | None) -> None:
    """`--report DIR` (None: not given): what `report_files.write_report` would refuse, at once."""
    if given is None:
        return
    from ..report.report_files import check_report_dir

    d = check_report_dir(given)
    _writable_place(d.parent, "--report", given)
