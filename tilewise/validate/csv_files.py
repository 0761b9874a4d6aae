"""The CSV files validate writes (metrics.csv, layer_errors.csv): a header row, one row per
record, empty cells for missing values; a path that cannot be written is one sentence (exit 2)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..errors import TilewiseError


def _writable(path: Path, what: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TilewiseError(f"{path}: cannot create the folder for the {what} ({e.strerror}); "
                            f"choose another path") from None
    if path.is_dir():
        raise TilewiseError(f"{path}: is a directory; give a file name for the {what}")


def write_csv(rows: list[dict[str, Any]], columns: tuple[str, ...], path: str | Path, what: str) -> None:
    path = Path(path)
    _writable(path, what)
    try:
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in columns})
    except OSError as e:
        raise TilewiseError(f"{path}: cannot write the {what} ({e.strerror}); choose another "
                            f"path") from None
