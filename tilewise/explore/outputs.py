"""The sweep's data files: DIR/points.json (every row, with the sweep's settings) and
DIR/points.csv (one line per point, the columns of `COLUMNS`; nested values as JSON text).

Rows are in the grid's order (grid.py `build_grid`), so two sweeps of the same grid write the same
points whether computed locally, on Dask, or read from the cache.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

COLUMNS: tuple[str, ...] = (
    "model", "target", "tiler", "modules", "l1_kb", "l2_kb", "cores", "clock_mhz", "ram_budget_kb",
    "objective", "status", "hypothetical", "beyond", "pareto", "pareto_ram", "chip_l1_kb", "chip_l2_kb", "cycles",
    "cycles_unit", "latency_ms", "energy_uj", "edp", "mac_per_cycle", "macs", "l1_bytes", "peak_l2_bytes",
    "ram_bytes", "weights_l2_bytes", "weights_l3_bytes", "flash_bytes", "layers_per_module",
    "measured_cycles", "measured_instructions", "estimated_cycles", "bit_exact", "measure_note", "reason", "key",
    "model_sha")


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in COLUMNS])


def write_json(rows: list[dict], path: Path, meta: dict) -> None:
    clean = [{k: v for k, v in r.items() if k != "traceback"} for r in rows]
    path.write_text(json.dumps({**meta, "points": clean}, indent=1, sort_keys=True) + "\n")
