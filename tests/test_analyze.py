"""`tilewise analyze`: table and JSON on the MLPerf Tiny models; MAC totals against an independent count.

The independent count reads the flatbuffer with the `tflite` schema package directly (no tilewise
code): CONV_2D = out elements × FY·FX·Cin, DEPTHWISE_CONV_2D = out elements × FY·FX,
FULLY_CONNECTED = out elements × Cin.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tflite

from tilewise.cli import main

from .conftest import MLPERF, mlperf_path

#: published MAC counts of the MLPerf Tiny reference models (MLPerf Tiny paper, Table 1), ±2%
PUBLISHED_MACS = {"ic_resnet8": 12.5e6, "kws_dscnn": 2.7e6, "vww_mobilenet_v1_025": 7.5e6, "ad_autoencoder": 0.264e6}


def independent_macs(path) -> int:
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sub = model.Subgraphs(0)
    codes = [max(model.OperatorCodes(i).BuiltinCode(), model.OperatorCodes(i).DeprecatedBuiltinCode())
             for i in range(model.OperatorCodesLength())]
    op = tflite.BuiltinOperator
    total = 0
    for i in range(sub.OperatorsLength()):
        o = sub.Operators(i)
        code = codes[o.OpcodeIndex()]
        if code not in (op.CONV_2D, op.DEPTHWISE_CONV_2D, op.FULLY_CONNECTED):
            continue
        out = sub.Tensors(o.Outputs(0)).ShapeAsNumpy()
        w = sub.Tensors(o.Inputs(1)).ShapeAsNumpy()
        if code == op.CONV_2D:
            total += int(np.prod(out)) * int(np.prod(w[1:]))
        elif code == op.DEPTHWISE_CONV_2D:
            total += int(np.prod(out)) * int(w[1] * w[2])
        else:
            total += int(np.prod(out)) * int(w[1])
    return total


@pytest.mark.parametrize("name", MLPERF)
def test_analyze_json_macs(name, capsys):
    path = mlperf_path(name)
    assert main(["analyze", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    macs = independent_macs(path)
    assert data["totals"]["macs"] == macs
    assert sum(l["macs"] for l in data["layers"]) == macs
    assert abs(macs - PUBLISHED_MACS[name]) / PUBLISHED_MACS[name] < 0.03
    assert data["totals"]["weight_bytes"] > 0
    biggest = max(data["layers"], key=lambda l: l["activation_bytes"])
    assert data["totals"]["max_layer_activation_bytes"] == biggest["activation_bytes"]
    for l in data["layers"]:
        assert {"name", "op", "input_shapes", "output_shape", "macs", "weight_bytes", "activation_bytes"} <= set(l)


def test_analyze_table(capsys):
    assert main(["analyze", str(mlperf_path("ic_resnet8"))]) == 0
    out = capsys.readouterr().out
    assert "totals" in out and "conv2d" in out and "12," in out
