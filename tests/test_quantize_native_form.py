"""`tilewise quantize` says when the target's native form of the same calibration is cheaper
(issue 27: onnx mode on a Cortex-M vs the TFLite form; quantize/native_form.py)."""

from __future__ import annotations

import json

import numpy as np
import onnx

from tilewise.cli import main
from tilewise.examples.make_example import HERE, float_model
from tilewise.quantize.native_form import NOTE_ABOVE


def _float_example(tmp_path):
    src, calib = tmp_path / "float.onnx", tmp_path / "calib.npy"
    onnx.save(float_model(), str(src))
    np.save(calib, np.load(HERE / "example_inputs.npz")["input"][:8])
    return src, calib


def _analyzed_cycles(path, capsys) -> float:
    assert main(["analyze", str(path), "--target", "stm32h7", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["totals"]["cycles"]


def test_qdq_model_names_the_cheaper_tflite_form_with_both_figures(tmp_path, capsys):
    src, calib = _float_example(tmp_path)
    out = tmp_path / "q.onnx"
    assert main(["quantize", str(src), "--calib", str(calib), "--target", "stm32h7", "-o", str(out),
                 "--json", "--quiet"]) == 0
    r = json.loads(capsys.readouterr().out)
    forms = r["forms"]
    assert forms["written"] == "onnx" and forms["other"] == "tflite"
    # the written figure is what analyze predicts for the file written
    assert abs(forms["written_cycles"] - _analyzed_cycles(out, capsys)) <= 1
    # the TFLite form of the same calibration, written by quantize itself, predicts the other
    tfl = tmp_path / "q.tflite"
    assert main(["quantize", str(src), "--calib", str(calib), "--target", "stm32h7", "-o", str(tfl),
                 "--json", "--quiet"]) == 0
    r_tfl = json.loads(capsys.readouterr().out)
    assert "forms" not in r_tfl and "notes" not in r_tfl
    assert abs(forms["other_cycles"] - _analyzed_cycles(tfl, capsys)) <= 1
    assert forms["ratio"] == round(forms["written_cycles"] / forms["other_cycles"], 3)
    said = [n for n in r.get("notes", []) if "TFLite" in n]
    assert bool(said) == (forms["ratio"] > NOTE_ABOVE), (forms, said)
    if said:
        assert "q.tflite" in said[0] and f"{forms['ratio']:.2f}×" in said[0]


def test_shift_mode_models_are_not_compared(tmp_path, capsys):
    """gap8's models are written in shift mode, its native form: nothing to compare."""
    src, calib = _float_example(tmp_path)
    assert main(["quantize", str(src), "--calib", str(calib), "--target", "gap8", "-o", str(tmp_path / "q.onnx"),
                 "--json", "--quiet"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["requant"] == "shift" and "forms" not in r
