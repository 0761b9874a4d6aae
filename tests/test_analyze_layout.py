"""analyze's layout: the default table fits 100 columns with no cell cut, --wide shows every
column, --csv every column as CSV, the tile legend reads the cells right, and the flash / RAM
summary labels raw weights and packed constants apart (report/tables.py, memory_summary.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import MLPERF, mlperf_path
from tilewise.cli import main
from tilewise.report.tables import analysis_columns, print_analysis

EXAMPLE = Path(__file__).resolve().parent.parent / "tilewise" / "examples" / "example_cnn.onnx"
TARGETS = ("diana", "gap8", "gap9", "idsp", "pulp-open", "stm32h7")


def _analysis(model: Path, target: str | None):
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.report.analysis import analyze_layers
    from tilewise.targets.registry import get_target

    lg = lower(load_model(model))
    ns = schedule_network(lg, get_target(target), "model") if target else None
    return analyze_layers(ns.layers if ns is not None else lg, ns), ns   # as cli/analyze.py


def _render(analysis, width: int, wide: bool = False) -> str:
    buf = io.StringIO()
    print_analysis(analysis, Console(file=buf, width=width, color_system=None), wide=wide)
    return buf.getvalue()


def _fits(text: str, width: int = 100) -> None:
    for line in text.splitlines():
        assert len(line) <= width, line
        assert "…" not in line, line


# vww_mobilenet_v1_025 needs more L2 than gap8 has (test_analyze_schedule); the others fit every target
CASES = ([(m, "gap9") for m in MLPERF] + [(m, "stm32h7") for m in MLPERF]
         + [("ic_resnet8", "gap8"), ("kws_dscnn", "pulp-open"), ("ad_autoencoder", "idsp")]
         + [("example", t) for t in TARGETS] + [(m, None) for m in MLPERF])


@pytest.mark.parametrize("model,target", CASES)
def test_default_table_fits_100_columns(model, target):
    path = EXAMPLE if model == "example" else mlperf_path(model)
    analysis, _ = _analysis(path, target)
    text = _render(analysis, 100)
    _fits(text)
    for i, row in enumerate(analysis.rows):
        assert row.name.replace("_", "")[:8] in text.replace("\n", "").replace(" ", "").replace("_", ""), row.name
    if target:
        assert "tiles: per loop dimension" in text and "(more columns with --wide" in text
        for s in analysis.scheduled:               # module / kernel is never folded
            assert f"{s.module} {s.binding.split('/')[-1]}" in text


def test_wide_has_every_column_and_csv_every_value(capsys):
    model = str(mlperf_path("ic_resnet8"))
    assert main(["analyze", model, "--target", "gap8", "--wide"]) == 0
    wide = capsys.readouterr().out
    analysis, _ = _analysis(mlperf_path("ic_resnet8"), "gap8")
    heads = [c.header for c in analysis_columns(analysis)]
    assert "…" not in wide
    for h in heads:
        assert h in wide, h
    assert main(["analyze", model, "--target", "gap8", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == heads and len(rows) == len(analysis.rows) + 1
    assert main(["analyze", model, "--target", "gap8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    col = {h: i for i, h in enumerate(heads)}
    for r, lay in zip(rows[1:], data["layers"]):
        assert r[col["layer"]] == lay["name"] and int(r[col["MACs"]]) == lay["macs"]
        assert int(r[col["cycles"]]) == round(lay["cycles"]) and int(r[col["L1 B"]]) == lay["l1_bytes"]
        assert int(r[col["raw W B"]]) == lay["weight_bytes"]


def test_tile_legend_matches_the_cells():
    """`OY17×2(15)`: tile 17, 2 tiles, the last one 15 long — what the legend under the table says,
    checked against the schedule's DimTiling of every multi-tile dimension (gap8 at 16 kB of L1)."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.report.analysis import analyze_layers
    from tilewise.report.tables import TILE_LEGEND, _tiles_cell
    from tilewise.targets.registry import get_target

    ns = schedule_network(lower(load_model(mlperf_path("ic_resnet8"))), get_target("gap8", l1_kb=16),
                          "model")
    a = analyze_layers(ns.layers, ns)
    seen_border = False
    for row, s in zip(a.scheduled, ns.schedules):
        cell = _tiles_cell(row)
        if cell == "untiled (L2)":
            assert s.l1_bytes == 0
            continue
        for t in s.tiles:
            if t.dim == "n" and t.size == 1:
                continue
            want = f"{t.dim.upper()}{t.tile}" + (f"×{t.count}" if t.count > 1 else "")
            if t.count > 1 and t.border != t.tile:
                want += f"({t.border})"
                seen_border = True
                assert t.tile * (t.count - 1) + t.border == t.size
            assert want in cell.split(), (want, cell)
    assert seen_border
    for term in ("K output channels", "C input channels", "OY / OX output rows / columns",
                 "×n = n tiles", "(b) = the last (border) tile"):
        assert term in TILE_LEGEND


def test_flash_ram_summary(capsys):
    """flash = every packed constant (L2 + L3 + in place), RAM = L1 arena + L2 peak; raw weights
    and packed constants are named apart in the text (ic_resnet8: 78,744 raw vs more packed)."""
    for target in ("gap8", "stm32h7"):
        assert main(["analyze", str(mlperf_path("ic_resnet8")), "--target", target, "--json"]) == 0
        t = json.loads(capsys.readouterr().out)["totals"]
        m = t["memory_summary"]
        assert m["flash_bytes"] == t["weights_l2_bytes"] + t["weights_l3_bytes"] + t["flash_bytes"]
        assert m["ram_bytes"] == t["ram_bytes"] == m["ram_l1_arena_bytes"] + m["ram_l2_peak_bytes"]
        assert m["raw_weight_bytes"] == t["weight_bytes"] == 78_744
        assert m["flash_bytes"] > m["raw_weight_bytes"]          # bias / requant arrays, padding
        assert m["ram_input_bytes"] == 32 * 32 * 3 and m["ram_output_bytes"] == 10
        assert m["ram_activations_live_bytes"] <= m["ram_l2_peak_bytes"]
        if target == "stm32h7":   # constants read in place from flash are not RAM
            assert m["flash_constants_in_place_bytes"] == m["flash_bytes"]
            assert m["ram_constants_in_l2_bytes"] == 0
        else:
            assert m["ram_constants_in_l2_bytes"] == t["weights_l2_bytes"]
        assert main(["analyze", str(mlperf_path("ic_resnet8")), "--target", target]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert f"flash: {m['flash_bytes']:,} B = packed constants" in text
        assert "code not counted" in text and "raw weights in the model are 78,744 B" in text
        assert f"RAM: {m['ram_bytes']:,} B = L1 arena" in text
        assert "78,744 B raw weights" in text
