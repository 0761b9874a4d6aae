"""Issue 25 item 11: the generated project's `make run` prints its output decoded.

main_host.c prints, before its TW_STATS line, the first output of each input (the first 8) in real
terms — dequantized with the scale and zero point network.h states (tw_network_info: a shift-mode
model's stated ones, not the IR's scale 1) — and the top class of a classifier-shaped output. The
printed values are held against output.bin dequantized here with the parameters of network.h;
validate (run.py) still reads the harness's TW_STATS line and outputs.
"""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import onnx
import pytest

from tilewise.cli import main
from tilewise.examples import EXAMPLE_ONNX, make_example
from tilewise.examples.make_example import HERE

_HEAD = re.compile(r"^output '(?P<name>[^']+)' \[(?P<dims>[\d, ]+)\] (?P<dtype>\w+), "
                   r"real = (?P<scale>[\d.eE+-]+) \* \(q (?P<sign>[-+]) (?P<zp>\d+)\):$", re.M)
_ROW = re.compile(r"^  input (\d+): ([^t]*?)(?:  top class (\d+) \(([^)]*)\))?$", re.M)


def _make_run(project) -> str:
    r = subprocess.run(["make", "-s", "-C", str(project), "run"], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def shift_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("decoded")
    fm = d / "float.onnx"
    onnx.save(make_example.float_model(), str(fm))
    q = d / "q_gap8.onnx"
    assert main(["quantize", str(fm), "--calib", str(HERE / "example_inputs.npz"), "--target",
                 "gap8", "-o", str(q), "--quiet"]) == 0
    return q


@pytest.mark.parametrize("which,target", [("example", "stm32h7"), ("shift", "gap8")])
def test_make_run_prints_the_dequantized_output_and_top_class(tmp_path, shift_model, which,
                                                              target):
    model = EXAMPLE_ONNX if which == "example" else shift_model
    out = tmp_path / "p"
    assert main(["generate", str(model), "--target", target, "-o", str(out), "--quiet"]) == 0
    o = json.loads((out / "tilewise.json").read_text())["output"]
    header = (out / "network.h").read_text()
    scale = float(re.search(r"#define TW_OUTPUT_SCALE ([\d.eE+-]+)f", header)[1])
    zp = int(re.search(r"#define TW_OUTPUT_ZERO_POINT \((-?\d+)\)", header)[1])
    if which == "shift":   # the model's stated parameters, not the codes' scale 1
        assert scale != 1.0 and zp == 131
    # ten inputs: eight printed, the rest counted
    one = (out / "input.bin").read_bytes()
    rng = np.random.default_rng(1)
    extra = [rng.integers(0, 256, len(one), dtype=np.uint8).tobytes() for _ in range(9)]
    (out / "input.bin").write_bytes(one + b"".join(extra))
    text = _make_run(out)
    # validate's parser of the same stdout: the TW_STATS line is still the last one, whole JSON
    assert json.loads(text.split("TW_STATS ", 1)[1])["inferences"] == 10
    head = _HEAD.search(text)
    assert head, text
    assert head["dtype"] == o["dtype"] and [int(v) for v in head["dims"].split(",")] == [1, 10]
    assert float(head["scale"]) == pytest.approx(scale, rel=1e-7)
    assert (-1 if head["sign"] == "+" else 1) * int(head["zp"]) == zp
    codes = np.fromfile(out / "output.bin", dtype=np.dtype(o["dtype"])).reshape(10, 10)
    real = np.float32(scale) * (codes.astype(np.float64) - zp)
    rows = _ROW.findall(text)
    assert [int(r[0]) for r in rows] == list(range(8)), text
    for i, values, top, top_value in rows:
        got = np.array([float(v) for v in values.split()])
        assert np.allclose(got, real[int(i)], rtol=1e-5, atol=1e-6), (got, real[int(i)])
        assert int(top) == int(np.argmax(codes[int(i)]))
        assert float(top_value) == pytest.approx(real[int(i)].max(), rel=1e-5)
    assert "(2 more inputs in the output file)" in text
