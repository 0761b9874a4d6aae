"""Issue 25 item 11: the small defects a new user met at 2da4f06, one test each.

Printed sizes typed back, output destinations checked before the work, float models pointed at
`tilewise quantize`, quantize's messages (calibration shapes in the user's layout, a low-SQNR
mixed model, what --calibration auto chose), explore --workers 0, analyze on a FIFO, the targets
table under COLUMNS, layer_errors.csv against the float model, the generated project's decoded
output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.conftest import absent, models_dir
from tilewise.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tilewise" / "examples" / "example_cnn.onnx"


def float_tflite(name: str) -> Path:
    """A float MLPerf Tiny model (models/mlperf_tiny_float); fails (CI) or skips when absent."""
    path = models_dir() / "mlperf_tiny_float" / f"{name}_float.tflite"
    if not path.exists():
        absent(f"float MLPerf Tiny model not found at {path} (set TILEWISE_MODELS)")
    return path


def _float_example(tmp_path: Path) -> tuple[Path, Path]:
    """(the bundled example's float ONNX model, 32 calibration inputs) written to tmp_path."""
    from tilewise.examples.make_example import example_data, float_model

    fpath, cpath = tmp_path / "float.onnx", tmp_path / "calib.npy"
    onnx.save(float_model(), str(fpath))
    np.save(cpath, example_data(32)[0])
    return fpath, cpath


# -- printed sizes parse back ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gap8", "gap9", "pulp-open", "stm32h7"])
def test_printed_free_sizes_are_taken_back_as_the_same_figure(name):
    """`tilewise targets` prints each memory's free kB to 0.1 kB with thousands separators (gap8's
    L1: 36.7 of 36.697 kB); typed back as --l1 / --l2 the figure is the same free size, not
    'more than the chip has'."""
    from tilewise.cli.options import positive_number
    from tilewise.targets.registry import get_target

    t = get_target(name)
    for mem in t.memories:
        if mem.name not in ("L1", "L2"):
            continue
        printed = f"{mem.free / 1024:,.1f}"   # as report/targets_report.py prints it
        kb = positive_number(printed)
        got = get_target(name, **{f"{mem.name.lower()}_kb": kb})
        assert next(m for m in got.memories if m.name == mem.name).free == mem.free
        assert not got.hypothetical


def test_gap8_l1_as_printed_on_the_command_line(capsys):
    assert main(["analyze", str(EXAMPLE), "--target", "gap8", "--l1", "36.7", "--json"]) == 0
    assert main(["analyze", str(EXAMPLE), "--target", "gap8", "--l1", "36.8"]) == 2
    assert "at most 36.7 kB" in capsys.readouterr().err


# -- destinations checked before the work ---------------------------------------------------------
def _no_work(monkeypatch) -> list[str]:
    """Make the work itself (loading the model, validating, generating) record that it ran."""
    calls: list[str] = []

    def ran(what):
        def f(*a, **k):
            calls.append(what)
            raise AssertionError(f"{what} ran before the destination was checked")
        return f

    import tilewise.codegen
    import tilewise.frontend
    import tilewise.validate
    import tilewise.validate.own_data

    monkeypatch.setattr(tilewise.frontend, "load_model", ran("load_model"))
    monkeypatch.setattr(tilewise.validate, "validate_path", ran("validate_path"))
    monkeypatch.setattr(tilewise.validate.own_data, "validate_data_path", ran("validate_data_path"))
    monkeypatch.setattr(tilewise.codegen, "generate_model", ran("generate_model"))
    return calls


def test_csv_and_report_destinations_are_refused_before_any_work(tmp_path, monkeypatch, capsys):
    calls = _no_work(monkeypatch)
    afile = tmp_path / "a_file"
    afile.write_text("x")
    data = ROOT / "tilewise" / "examples" / "example_inputs.npz"
    base = ["validate", str(EXAMPLE), "--target", "gap8", "--data", str(data)]
    cases = [
        (base + ["--layer-csv", str(afile / "layers.csv")], "--layer-csv"),
        (base + ["--metrics-csv", str(afile / "m.csv")], "--metrics-csv"),
        (base + ["--metrics-csv", str(tmp_path)], "--metrics-csv"),          # a directory
        (base + ["--report", str(afile / "rep")], "--report"),
        (["validate", str(EXAMPLE), "--target", "gap8", "--report", str(afile)], "--report"),
        (["analyze", str(EXAMPLE), "--target", "gap8", "--report", str(afile / "r")], "--report"),
        (["generate", str(EXAMPLE), "--target", "gap8", "-o", str(tmp_path / "p"), "--report",
          str(afile / "r")], "--report"),
    ]
    if os.geteuid() != 0:   # root writes anywhere but a read-only mount
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        cases.append((base + ["--layer-csv", str(ro / "l.csv")], "--layer-csv"))
    for argv, option in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"tilewise: error: {option} ") and err.count("\n") == 1, err
        assert "Traceback" not in err
    assert calls == []
    assert not (tmp_path / "p").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a_file"] + (["ro"] if os.geteuid() != 0 else []))


# -- float models point at tilewise quantize ------------------------------------------------------
def test_float_models_are_refused_with_tilewise_quantize_named(tmp_path, capsys):
    from tilewise.examples.make_example import float_model

    fonnx = tmp_path / "float.onnx"
    onnx.save(float_model(), str(fonnx))
    for model in (fonnx, float_tflite("kws_dscnn"), float_tflite("ic_resnet8")):
        assert main(["analyze", str(model)]) == 2
        err = capsys.readouterr().err
        assert "tilewise quantize" in err and err.count("\n") == 1, err


# -- quantize's messages --------------------------------------------------------------------------
def test_calibration_shape_errors_show_the_users_shape_and_layout(tmp_path, capsys):
    """A .tflite model's calibration data is NHWC: the error shows the array as the file holds it
    and the shape wanted in the same layout (not both transposed to the converted model's NCHW)."""
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((4, 32, 32, 4), np.float32))
    assert main(["quantize", str(float_tflite("ic_resnet8")), "--calib", str(bad),
                 "--target", "stm32h7", "-o", str(tmp_path / "q.onnx")]) == 2
    err = capsys.readouterr().err
    assert "(4, 32, 32, 4)" in err and "N x 32x32x3" in err, err
    assert not (tmp_path / "q.onnx").exists()


def test_mixed_bits_with_a_low_output_sqnr_is_warned_about(tmp_path, capsys):
    fpath, cpath = _float_example(tmp_path)
    out = tmp_path / "m.onnx"
    assert main(["quantize", str(fpath), "--calib", str(cpath), "--target", "stm32h7", "--bits",
                 "mixed", "--weight-budget", "0.4", "-o", str(out), "--json"]) == 0
    cap = capsys.readouterr()
    r = json.loads(cap.out)
    db = r["calibration_sqnr"]["outputs"][0]["sqnr_db"]
    assert db < 20
    assert "warning" in cap.err and "--weight-budget" in cap.err and f"{db:.2f} dB" in cap.err
    assert r["warnings"] and "--weight-budget" in r["warnings"][0]
    # an 8-bit model of the same network is well above the threshold: no warning
    assert main(["quantize", str(fpath), "--calib", str(cpath), "--target", "stm32h7",
                 "-o", str(tmp_path / "q8.onnx")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_calibration_auto_says_what_it_chose(tmp_path, capsys):
    fpath, cpath = _float_example(tmp_path)
    assert main(["quantize", str(fpath), "--calib", str(cpath), "--target", "stm32h7",
                 "--calibration", "auto", "-o", str(tmp_path / "q.onnx")]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if "--calibration auto chose" in ln)
    chosen = line.split("chose ")[1].split(":")[0]
    assert chosen in ("minmax", "percentile", "mse")
    assert all(m in line for m in ("minmax", "percentile", "mse")) and "dB" in line


# -- explore --workers 0 --------------------------------------------------------------------------
def test_explore_workers_0_leaves_nothing(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["explore", str(EXAMPLE), "--target", "gap8", "--workers", "0", "-o", str(out)]) == 2
    assert "--workers" in capsys.readouterr().err
    assert not out.exists()


# -- non-regular files ----------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_in_one_sentence_not_read(tmp_path):
    fpath, _ = _float_example(tmp_path)
    (tmp_path / "fifos").mkdir()
    fifo = tmp_path / "fifos" / "model.tflite"
    os.mkfifo(fifo)
    calib = tmp_path / "fifos" / "calib.npy"
    os.mkfifo(calib)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for argv in (["analyze", str(fifo)],
                 ["quantize", str(fpath), "--calib", str(calib), "--target", "stm32h7",
                  "-o", str(tmp_path / "q.onnx")]):
        try:   # reading a FIFO without a writer blocks for ever
            r = subprocess.run([sys.executable, "-m", "tilewise.cli", *argv], capture_output=True,
                               text=True, timeout=60, env=env, cwd=tmp_path)
        except subprocess.TimeoutExpired:
            pytest.fail(f"tilewise {argv[0]} on a FIFO hangs")
        assert r.returncode == 2, r.stderr
        assert "not a regular file" in r.stderr and r.stderr.count("\n") == 1, r.stderr


# -- the targets table ----------------------------------------------------------------------------
def test_targets_table_fits_columns(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["targets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("gap8" in ln for ln in lines)
    assert max(len(ln.rstrip()) for ln in lines) <= 100
