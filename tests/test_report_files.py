"""Report files (`--report DIR` on analyze / generate / validate, <project>/report): their JSON and
text, the all-or-nothing write, and report.html's plots seen by headless Chromium.

The screenshot check (`plots_visible`) counts pixels of the plots' fixed colours (plots.py): every
module that runs a layer and every L2 buffer kind must show up as a solid area. It is held against
the same report rendered without its figures, which must fail it (the check can fail). Chromium is
the Debian package `chromium` (`make sysdeps`), found by name or $TILEWISE_CHROMIUM; it is required
under TILEWISE_REQUIRE_MODELS=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import absent, mlperf_path
from tilewise.cli import main
from tilewise.report import plots
from tilewise.report.report_files import build_report, figures, render_html, write_report

EXAMPLE = Path(__file__).resolve().parent.parent / "tilewise" / "examples" / "example_cnn.onnx"


def chromium() -> str:
    name = os.environ.get("TILEWISE_CHROMIUM", "chromium")
    path = shutil.which(name)
    if path is None:
        absent(f"Chromium not found as {name!r} (apt-get install chromium, or set TILEWISE_CHROMIUM)")
    return path


def screenshot(html: Path, png: Path, tmp_path: Path, size: tuple[int, int] = (1280, 3200)) -> np.ndarray:
    """RGB pixels (uint8) of `html` as headless Chromium renders it."""
    profile = tmp_path / f"chromium-profile-{png.stem}"
    proc = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={png}",
         f"--window-size={size[0]},{size[1]}", html.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert png.exists(), f"chromium wrote no screenshot: {proc.stderr[-2000:]}"
    import matplotlib.image

    img = matplotlib.image.imread(png)
    return (np.asarray(img)[..., :3] * 255).round().astype(np.uint8)


def colour_pixels(img: np.ndarray, colour: str, tol: int = 3) -> int:
    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=int)
    return int((np.abs(img.astype(int) - rgb).max(axis=-1) <= tol).sum())


def plots_visible(img: np.ndarray, colours: list[str], least: int = 1500) -> dict[str, int]:
    """Pixels of each plot colour that covers fewer than `least` pixels (empty: all visible)."""
    counts = {c: colour_pixels(img, c) for c in colours}
    return {c: n for c, n in counts.items() if n < least}


def _analysis(model: Path, target_name: str):
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.report.analysis import analyze_layers
    from tilewise.targets.registry import get_target

    target = get_target(target_name)
    ns = schedule_network(lower(load_model(model)), target, "model")
    return analyze_layers(ns.layers, ns), ns, target


@pytest.fixture(scope="module")
def resnet_gap9():
    return _analysis(mlperf_path("ic_resnet8"), "gap9")


def test_report_screenshot_shows_the_plots(tmp_path, capsys):
    """analyze --report: Chromium shows the cycles plot in each module's colour (cluster and NE16
    both run layers of ic_resnet8 on gap9), the exposed-DMA parts, the L2 plan's activation and
    constant buffers; the same report without figures fails the same check."""
    out = tmp_path / "rep"
    assert main(["analyze", str(mlperf_path("ic_resnet8")), "--target", "gap9", "--report",
                 str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.txt"]
    data = json.loads((out / "report.json").read_text())
    modules = [m["name"] for m in data["header"]["modules"]]
    used = sorted({lay["module"] for lay in data["layers"]})
    assert used == ["cluster", "ne16"]
    colours = plots.module_colours(modules)
    want = ([colours[m] for m in used] + [plots.KIND_COLOURS["activation"],
                                          plots.KIND_COLOURS["weight"]])
    img = screenshot(out / "report.html", tmp_path / "with.png", tmp_path)
    assert plots_visible(img, want) == {}

    from tilewise.report.report_files import Report

    bare = tmp_path / "bare.html"
    rep = Report(data, (out / "report.txt").read_text(), (), ())
    bare.write_text(render_html(rep, plots=False))
    img = screenshot(bare, tmp_path / "without.png", tmp_path)
    assert set(plots_visible(img, want)) == set(want)


def test_report_json_and_text(resnet_gap9, tmp_path):
    """report.json: per-layer compute + exposed DMA = the layer's cycles, the L2 plan's buffers at
    their offsets, the header; report.txt: plain text with every column, the tile legend and the
    flash / RAM summary; report.html: self-contained (inline SVG, nothing fetched)."""
    analysis, ns, target = resnet_gap9
    rep = build_report("analyze", analysis, ns, target)
    d = write_report(tmp_path / "r", rep)
    data = json.loads((d / "report.json").read_text())
    assert data["header"]["target"] == "gap9" and data["header"]["hypothetical"] is False
    for i, lay in enumerate(data["layers"]):
        assert lay["compute_cycles"] >= 0 and lay["dma_exposed_cycles"] >= 0
        assert lay["compute_cycles"] + lay["dma_exposed_cycles"] == pytest.approx(ns.layer_cycles(i))
    assert sum(lay["dma_exposed_cycles"] for lay in data["layers"]) > 0
    plan = data["memory_plan"]
    assert plan["peak_bytes"] == ns.memory.peak
    assert {b["name"]: b["offset"] for b in plan["buffers"]} == ns.memory.plan.offsets
    assert max(b["offset"] + b["size"] for b in plan["buffers"]) <= plan["peak_bytes"]
    text = (d / "report.txt").read_text()
    assert "\x1b" not in text
    for what in ("loop order", "DMA B", "MAC/cyc", "tiles: per loop dimension", "flash:", "RAM:",
                 "raw weights", "packed constants"):
        assert what in text, what
    html = (d / "report.html").read_text()
    assert html.count("<svg") == 3
    for fetch in ("src=", "<link", "<script", 'href="http', "url(http"):
        assert fetch not in html, fetch
    assert "Hypothetical chip" not in html
    hyp = build_report("analyze", analysis, ns, replace(target, hypothetical=True))
    assert hyp.data["header"]["hypothetical"] is True
    assert "Hypothetical chip" in render_html(hyp) and "hypothetical chip" in hyp.text


def test_metrics_and_measured_plots(resnet_gap9, tmp_path):
    """validate's JSON: measured vs predicted per layer and the metrics (the documented shape:
    vs_reference scalars, vs_labels accuracy and confusion) become a figure and a table; absent
    parts are skipped."""
    analysis, ns, target = resnet_gap9
    rep = build_report("validate", analysis, ns, target)
    rows = [{"index": i, "name": lay["name"], "predicted_cycles": ns.layer_cycles(i),
             "measured_cycles": int(ns.layer_cycles(i) * 1.1)} for i, lay in enumerate(rep.data["layers"])]
    conf = [[5, 1, 0], [0, 6, 1], [2, 0, 7]]
    rep.data["validation"] = {"bit_exact": True, "inputs": 22, "platform": "gvsoc", "layers": rows,
                              "metrics": {"vs_reference": {"acc": 1.0, "rmse": 0.0, "mae": 0.0,
                                                           "l2r": 0.0, "cos": 1.0},
                                          "vs_labels": {"accuracy": 0.818, "confusion": conf}}}
    caps = [c for c, _ in figures(rep.data)]
    assert len(caps) == 5 and any("Measured" in c for c in caps) and any("Confusion" in c for c in caps)
    html = render_html(rep)
    for k in ("acc", "rmse", "mae", "l2r", "cos", "accuracy"):
        assert f"<td>{k}</td>" in html, k
    del rep.data["validation"]["metrics"]["vs_labels"]
    rep.data["validation"]["layers"] = []
    assert len(figures(rep.data)) == 3
    html = render_html(rep)
    assert "<td>accuracy</td>" not in html and "<td>rmse</td>" in html
    assert "confusion" not in figures(rep.data)[-1][0].lower()


def test_confusion_heatmap_screenshot(tmp_path):
    """The confusion matrix's heat-map shows in Chromium (its darkest cell's colour)."""
    svg = plots.confusion_figure([[9, 1], [0, 10]])
    page = tmp_path / "c.html"
    page.write_text(f"<!DOCTYPE html><html><body style='background:#fff'>{svg}</body></html>")
    img = screenshot(page, tmp_path / "c.png", tmp_path, (900, 700))
    import matplotlib

    dark = matplotlib.colors.to_hex(matplotlib.colormaps["Blues"](1.0))
    assert colour_pixels(img, dark, tol=4) > 2000


def test_bad_report_dir_is_one_sentence(tmp_path, capsys):
    model = str(EXAMPLE)
    afile = tmp_path / "a_file"
    afile.write_text("x")
    assert main(["analyze", model, "--target", "gap8", "--report", str(afile)]) == 2
    err = capsys.readouterr().err
    assert "not a directory" in err and str(afile) in err and err.count("\n") == 1
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("keep")
    assert main(["analyze", model, "--target", "gap8", "--report", str(busy)]) == 2
    assert "other files" in capsys.readouterr().err
    assert sorted(p.name for p in busy.iterdir()) == ["mine.txt"]
    blocked = afile / "sub"          # a path under a file cannot be created
    assert main(["analyze", model, "--target", "gap8", "--report", str(blocked)]) == 2
    assert "cannot create" in capsys.readouterr().err
    # a previous report is replaced whole
    rep = tmp_path / "rep"
    assert main(["analyze", model, "--target", "gap8", "--report", str(rep)]) == 0
    assert main(["analyze", model, "--report", str(rep)]) == 0
    data = json.loads((rep / "report.json").read_text())
    assert "target" not in data["header"] and "memory_plan" not in data
    assert (rep / "report.html").read_text().count("<svg") == 1      # MACs / weights per layer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "busy", "rep"]


def test_write_is_all_or_nothing(resnet_gap9, tmp_path, monkeypatch):
    """A failure while writing leaves neither DIR nor a temporary directory behind, and keeps a
    previous report."""
    analysis, ns, target = resnet_gap9
    rep = build_report("analyze", analysis, ns, target)
    d = write_report(tmp_path / "r", rep)
    before = (d / "report.json").read_text()
    real = Path.write_text

    def failing(self, text, *a, **k):
        if self.name == "report.html":
            raise OSError(28, "No space left on device")
        return real(self, text, *a, **k)

    monkeypatch.setattr(Path, "write_text", failing)
    from tilewise.errors import TilewiseError

    with pytest.raises(TilewiseError, match="No space left"):
        write_report(tmp_path / "new", rep)
    with pytest.raises(TilewiseError, match="No space left"):
        write_report(d, rep)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
    assert (d / "report.json").read_text() == before


def test_generate_writes_the_project_report(tmp_path, capsys):
    proj = tmp_path / "proj"
    extra = tmp_path / "extra"
    assert main(["generate", str(EXAMPLE), "--target", "gap8", "-o", str(proj), "--report",
                 str(extra)]) == 0
    for d in (proj / "report", extra):
        data = json.loads((d / "report.json").read_text())
        assert data["command"] == "generate" and data["project"] == str(proj)
        assert (d / "report.html").read_text().count("<svg") == 3


def test_validate_writes_reports(tmp_path, capsys):
    """validate -o: into the project; --report: also there; the validation's JSON is in it."""
    proj = tmp_path / "proj"
    extra = tmp_path / "extra"
    assert main(["validate", str(EXAMPLE), "--target", "gap8", "--inputs", "2", "-o", str(proj),
                 "--report", str(extra)]) == 0
    for d in (proj / "report", extra):
        data = json.loads((d / "report.json").read_text())
        assert data["command"] == "validate" and data["validation"]["bit_exact"] is True
        assert "BIT-EXACT" in (d / "report.txt").read_text()
        assert "BIT-EXACT" in (d / "report.html").read_text()
