"""Issue 25 item 1: the input/output quantization a shift-mode model states survives downstream.

`tilewise quantize --target gap8` (shift mode, quantize/shift_out.py) writes an integer model
whose input and output are codes u in float32, real = scale·(u − zero point), the parameters in
its metadata (`tilewise.quant.<tensor>`). The frontend records them (frontend/onnx_stated.py,
graph.meta["io_quant"], ir/io_quant.py): `validate --data` quantizes float inputs and dequantizes
the output with them — the bundled example's float parent, quantized for gap8, is as accurate
against the float model's decisions as the onnx-mode (stm32h7) model on the same data — and
network.h / tilewise.json state them. Malformed statements are one sentence, exit 2.
"""

from __future__ import annotations

import json
import re

import numpy as np
import onnx
import pytest

from tilewise.cli import main
from tilewise.examples import make_example
from tilewise.examples.make_example import HERE

from .conftest import error_lines

DATA = HERE / "example_inputs.npz"
LABELS = HERE / "example_labels.npy"
EXPECTED = HERE / "example_expected.npy"


def _stated(model) -> dict[str, tuple[float, int]]:
    out = {}
    for e in onnx.load(str(model)).metadata_props:
        if e.key.startswith("tilewise.quant."):
            s, z = e.value.split()
            out[e.key[len("tilewise.quant."):]] = (float(s), int(z))
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The example's float parent quantized in shift mode (gap8) and in onnx mode (stm32h7)."""
    d = tmp_path_factory.mktemp("stated")
    fm = d / "float.onnx"
    onnx.save(make_example.float_model(), str(fm))
    out = {}
    for target in ("gap8", "stm32h7"):
        q = d / f"q_{target}.onnx"
        assert main(["quantize", str(fm), "--calib", str(DATA), "--target", target, "-o", str(q),
                     "--quiet"]) == 0
        out[target] = q
    return out


def _validate(model, target, capsys, *extra):
    capsys.readouterr()
    rc = main(["validate", str(model), "--target", target, "--data", str(DATA), "--labels",
               str(LABELS), "--expected", str(EXPECTED), "--json", *extra])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def test_validate_data_quantizes_floats_with_the_stated_parameters(models, capsys):
    stated = _stated(models["gap8"])
    assert {"input", "logits"} <= set(stated) and stated["input"][1] != 0   # zero point 128
    shift = _validate(models["gap8"], "gap8", capsys)
    onnx_mode = _validate(models["stm32h7"], "stm32h7", capsys)
    assert shift["bit_exact"] and onnx_mode["bit_exact"]
    data, output = shift["metrics"]["data"], shift["metrics"]["output"]
    assert (data["scale"], data["zero_point"]) == pytest.approx(stated["input"])
    assert (output["scale"], output["zero_point"]) == pytest.approx(stated["logits"])
    # the acceptance: accuracy against the float model's decisions equal to the onnx-mode model's
    acc = shift["metrics"]["labels"]["accuracy"]
    assert acc == onnx_mode["metrics"]["labels"]["accuracy"] and acc >= 0.8
    # and the dequantized logits as close to the float model's as the onnx-mode model's
    rmse = shift["metrics"]["vs_expected"]["rmse"]
    assert rmse < 1.5 * onnx_mode["metrics"]["vs_expected"]["rmse"] + 1e-3


def test_integer_data_are_still_the_codes(models, capsys, tmp_path):
    """Integers are the codes as given: the float data quantized by hand give the same report."""
    s, z = _stated(models["gap8"])["input"]
    x = np.load(DATA)["input"]
    codes = np.clip(np.rint(x.astype(np.float32) / np.float32(s)) + z, 0, 255).astype(np.uint8)
    np.save(tmp_path / "codes.npy", codes)
    capsys.readouterr()
    rc = main(["validate", str(models["gap8"]), "--target", "gap8", "--data",
               str(tmp_path / "codes.npy"), "--labels", str(LABELS), "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    r = json.loads(out.out)
    assert r["metrics"]["data"]["values"].startswith("quantized uint8 values as given")
    assert r["metrics"]["labels"]["accuracy"] == _validate(models["gap8"], "gap8", capsys)[
        "metrics"]["labels"]["accuracy"]


def _macro(h: str, name: str) -> str:
    m = re.search(rf"^#define {name} \(?([^)\s]+)\)?$", h, re.M)
    assert m, name
    return m.group(1)


def test_network_h_and_the_manifest_state_the_models_scales(models, tmp_path, capsys):
    stated = _stated(models["gap8"])
    assert main(["generate", str(models["gap8"]), "--target", "gap8", "-o", str(tmp_path / "p"),
                 "--quiet"]) == 0
    h = (tmp_path / "p" / "network.h").read_text()
    for macro, tensor in (("INPUT", "input"), ("OUTPUT", "logits")):
        s, z = stated[tensor]
        assert np.float32(_macro(h, f"TW_{macro}_SCALE").rstrip("f")) == np.float32(s), macro
        assert int(_macro(h, f"TW_{macro}_ZERO_POINT")) == z, macro
        assert _macro(h, f"TW_{macro}_TYPE") == "uint8_t"
    m = json.loads((tmp_path / "p" / "tilewise.json").read_text())
    assert m["inputs"][0]["scale"] == pytest.approx(stated["input"][0], rel=1e-7)
    assert m["outputs"][0]["zero_point"] == stated["logits"][1]


def _with_metadata(src, dst, key, value):
    m = onnx.load(str(src))
    for e in m.metadata_props:
        if e.key == key:
            e.value = value
    onnx.save(m, str(dst))
    return dst


@pytest.mark.parametrize("value", ["abc", "0.5", "-1 3", "nan 0", "0.1 2.5"])
def test_a_malformed_statement_is_one_sentence(models, tmp_path, capsys, value):
    bad = _with_metadata(models["gap8"], tmp_path / "bad.onnx", "tilewise.quant.input", value)
    capsys.readouterr()
    rc = main(["analyze", str(bad), "--target", "gap8"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert "tilewise.quant.input" in err and len(error_lines(err)) == 1, err


def test_a_zero_point_outside_the_code_type_is_refused(models, capsys):
    capsys.readouterr()
    rc = main(["analyze", str(models["gap8"]), "--target", "gap8", "--input-dtype", "int8"])
    err = capsys.readouterr().err
    assert rc == 2 and "zero point 128" in err and "--input-dtype" in err, err
