"""bench/: the fast parts of the benchmark (tables 4 and 5 on one model, the rebuilt geometries,
the published figures against their source) so CI notices when `make bench` would break."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench import geometries, published, ram_front, run, schedule_quality, silicon, stats, tables
from bench import results_md as results_page
from tests.conftest import REPO, absent, mlperf_path
from tilewise.ir.ops import Op

ANCHORS = REPO.parent / "shared" / "notes" / "anchors.md"


def test_ratios_are_run_by_run():
    num, den = [2.0, 4.0, 9.0], [1.0, 4.0, 3.0]
    assert stats.run_ratios(num, den) == [2.0, 1.0, 3.0]
    assert stats.median_ratio(num, den) == 2.0            # not median(num) / median(den) = 4/3
    with pytest.raises(ValueError):
        stats.run_ratios([1.0], [1.0, 2.0])


def test_interleaved_wall_times_alternate():
    calls: list[str] = []
    times = stats.interleaved_wall_times([lambda: calls.append("a"), lambda: calls.append("b")], runs=2)
    assert calls == ["a", "b"] * 3                    # one warm-up round, then two timed rounds
    assert [len(t) for t in times] == [2, 2] and all(x >= 0 for t in times for x in t)


def test_table_render_formats_cells():
    t = tables.Table("k", "T", ("a", "b", "c", "d"), (("x", 1234567, 0.1234, None), ("y", 2.5, "n/a (why)", True)),
                     notes=("source: here",))
    text = tables.render(t)
    assert "| x | 1,234,567 | 0.123 | — |" in text
    assert "| y | 2.50 | n/a (why) | yes |" in text
    assert text.rstrip().endswith("- source: here")


def test_geometries_match_published_macs():
    assert geometries.pulp_nn_layer().layers[0].macs == published.PULPNN_MACS.value
    for name, build in geometries.DORY_NETWORKS.items():
        lg = build()
        macs = sum(layer.macs for layer in lg.layers)
        pub = published.DORY_GAP8[name][0].value
        assert abs(macs / pub - 1) < 0.015, (name, macs, pub)
        # plausible requantization: every multiplier a real Q31 mantissa, weights int8
        for layer in lg.layers:
            if layer.requant is not None and layer.weights is not None:
                assert (layer.requant.multiplier >= 1 << 30).all() and (layer.requant.multiplier < 1 << 31).all()
                assert layer.weights.dtype.name == "int8"
    v2 = geometries.mobilenet_v2(128)
    assert sum(layer.op == Op.ADD for layer in v2.layers) == 10      # residuals of MobileNetV2


def _renderings(v: float) -> set[str]:
    out = {f"{v:g}", f"{v:,.0f}", f"{v:.2f}"}
    if v >= 1e5:
        out |= {f"{v / 1e3:,.0f}k", f"{v / 1e6:.1f}M"}
    return out


def test_published_figures_come_from_anchors():
    if not ANCHORS.exists():
        absent(f"{ANCHORS} not found (shared/ beside the repository)")
    text = ANCHORS.read_text()
    for label, fig in published.all_figures():
        assert fig.source.startswith(("seed 00", "anchors.md")), label
        assert any(r in text for r in _renderings(fig.value)), (label, fig.value)


def test_schedule_quality_one_model():
    mlperf_path("kws_dscnn")
    t = schedule_quality.measure(["kws_dscnn"])
    assert [r[1] for r in t.rows] == [36.7, 16]
    for _, _, model, dory, ratio in t.rows:
        assert isinstance(model, float) and isinstance(dory, float)
        assert ratio == pytest.approx(model / dory)
        assert ratio <= 1.0 + 1e-9          # the latency objective never loses to DORY's on its own cost model


def test_ram_front_one_model():
    """Table 16's front on ic_resnet8 (stm32h7): every budgeted point within its budget, the
    least-RAM point the smallest, no point both larger and slower than another (the fastest
    schedule within each budget), and the unfused one the fastest."""
    from bench import scheduling

    lg = scheduling.lowered(mlperf_path("ic_resnet8"))
    pts = ram_front.front(lg, scheduling.target("stm32h7"))
    assert pts[0]["label"] == "unfused" and pts[-1]["label"].endswith("(least RAM)")
    assert len(pts) >= 2 and pts[-1]["ram"] < pts[0]["ram"]
    for p in pts:
        assert p["budget"] is None or p["ram"] <= p["budget"], p
        assert p["ram"] >= pts[-1]["ram"] and p["cycles"] >= pts[0]["cycles"] - 1e-6, p
        assert not any(q["ram"] < p["ram"] and q["cycles"] < p["cycles"] for q in pts
                       if q["budget"] is not None and p["budget"] is not None), p


def test_silicon_gap9_one_model():
    mlperf_path("ic_resnet8")
    t = silicon.gap9_mlperf(["ic_resnet8"])
    (row,) = t.rows
    d = t.data["ic_resnet8"]
    assert row[3] == published.DORY_GAP9_MS["ic_resnet8"].value
    assert row[5] == published.MATCH_GAP9_CLUSTER_MS["ic_resnet8"].value
    assert d["err_dory_pct"] == pytest.approx(100 * (d["pred_ms"]["dory"] / row[3] - 1))
    assert all(math.isfinite(v) and v > 0 for v in d["pred_ms"].values())
    assert any("seed 003 Table III" in n for n in t.notes)


def test_run_writes_results(tmp_path: Path, capsys):
    mlperf_path("kws_dscnn")
    res = tmp_path / "results.json"
    assert run.main(["--only", "4", "--models", "kws_dscnn", "--runs", "1", "--results", str(res),
                     "--out", str(tmp_path / "out")]) == 0
    doc = json.loads(res.read_text())
    assert doc["machine"]["cpu"] and doc["models"] == ["kws_dscnn"]
    assert list(doc["tables"]) == ["schedule_quality"]
    assert (tmp_path / "out" / "schedule_quality.png").stat().st_size > 1000
    out = capsys.readouterr().out
    assert "## Machine" in out and "Table 4" in out
    with pytest.raises(SystemExit):
        run.main(["--only", "99"])


def test_partial_run_keeps_the_other_tables(tmp_path: Path):
    """`--only 4` over a results file (and RESULTS.md) holding other tables replaces table 4 and keeps
    the rest, each labelled with the commit it was measured at, with its section seconds and plot
    (a partial run once wiped the tables, then the seconds and plots of the kept ones)."""
    mlperf_path("kws_dscnn")
    res = tmp_path / "results.json"
    old = tables.Table("diana", "Table 9 — diana", ("model", "ms"), (("kws", 1.5),), ("a note",))
    stale = tables.Table("schedule_quality", "Table 4 — stale", ("x",), ((1,),))
    res.write_text(json.dumps({"machine": {"commit": "abc1234"},
                               "section_seconds": {"diana": 1.25, "schedule_quality": 9.0},
                               "plots": ["bench/out/diana.png", "bench/out/schedule_quality.png"],
                               "tables": {t.key: t.to_json() for t in (old, stale)}}))
    page = tmp_path / "RESULTS.md"
    page.write_text(f"# x\n\n{results_page.START}\nold\n{results_page.END}\ntail\n")
    assert run.main(["--only", "4", "--models", "kws_dscnn", "--runs", "1", "--results", str(res),
                     "--out", str(tmp_path / "out"), "--no-plots", "--results-md", str(page)]) == 0
    doc = json.loads(res.read_text())
    assert list(doc["tables"]) == ["schedule_quality", "diana"]
    assert doc["tables"]["diana"] == old.to_json()
    assert doc["tables"]["schedule_quality"]["title"] != "Table 4 — stale"
    assert doc["measured_at"]["diana"] == "abc1234"
    # the kept table's seconds and plot stay; the replaced table's are this run's (no plots here)
    assert doc["section_seconds"]["diana"] == 1.25 and doc["section_seconds"]["schedule_quality"] != 9.0
    assert doc["plots"] == ["bench/out/diana.png"]
    assert doc["measured_at"]["schedule_quality"] == (doc["machine"]["commit"] or "unknown")
    text = page.read_text()
    assert "Table 9 at abc1234" in text and text.index("Table 4 —") < text.index("Table 9 — diana")
    assert "stale" not in text and text.endswith("tail\n")
