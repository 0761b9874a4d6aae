"""A PyTorch-style NCHW TFLite model (graph input [1, C, H, W], first op TRANSPOSE perm (0, 2, 3, 1)):
the frontend folds the transpose into the input layout (frontend/tflite_layout.py), the generated
network takes the model's NCHW input and transposes it on its copy into L2 (no host-core layer),
and validate holds it bit-exact against LiteRT. Other transposes stay layers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.ir.layout import INPUT_PERM, model_input
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets import get_target
from tilewise.validate.check import validate_model

from .cpu_models import _conv
from .tflite_builder import ModelBuilder, compare_with_litert


def nchw_model(dtype: str = "int8", c: int = 3, hw: tuple[int, int] = (6, 5), seed: int = 11,
               perm: tuple[int, ...] = (0, 2, 3, 1)) -> ModelBuilder:
    """x [1, c, H, W] → TRANSPOSE(perm) → CONV_2D 3×3 (int16 in: a 16x8 conv) → 1×1 CONV_2D."""
    r, b = np.random.RandomState(seed), ModelBuilder()
    wide = dtype == "int16"
    q = dict(scale=0.0007, zero_point=0) if wide else dict(scale=0.05, zero_point=-3)
    x = b.input("x_nchw", (1, c, *hw), dtype, **q)
    p = b.const("perm", np.array(perm, np.int32), "int32")
    nhwc = tuple((1, c, *hw)[i] for i in perm)
    t = b.tensor("x_nhwc", nhwc, dtype, **q)
    b.op("TRANSPOSE", [x, p], [t], "TransposeOptions")
    h = _conv(b, r, t, nhwc[3], 8, 3, nhwc[1:3], "h", dtype=dtype, scale=0.0009 if wide else 0.05)
    if wide:
        y = b.tensor("y", (1, *nhwc[1:3], 8), "int8", scale=0.11, zero_point=-9)
        b.op("QUANTIZE", [h], [y])
        b.output(y)
    else:
        b.output(_conv(b, r, h, 8, 4, 1, nhwc[1:3], "y"))
    return b


def test_the_input_transpose_is_folded_into_the_layout(tmp_path):
    g = load_model(nchw_model().save(tmp_path / "m.tflite"))
    assert g.meta[INPUT_PERM] == (0, 2, 3, 1)
    assert g.inputs == ("x_nhwc",) and g.tensors["x_nhwc"].shape == (1, 6, 5, 3)
    assert Op.TRANSPOSE not in {n.op for n in g.nodes} and "x_nchw" not in g.tensors
    x = np.arange(90, dtype=np.int8).reshape(1, 6, 5, 3)
    assert np.array_equal(model_input(g.meta, x), x.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("perm", [(0, 3, 1, 2), (0, 1, 3, 2)])
def test_other_input_transposes_stay_layers(perm, tmp_path):
    g = load_model(nchw_model(perm=perm, hw=(4, 4), c=4).save(tmp_path / "m.tflite"))
    assert INPUT_PERM not in g.meta and g.nodes[0].op == Op.TRANSPOSE


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_golden_of_the_folded_model_matches_litert(dtype, tmp_path):
    bad, total = compare_with_litert(nchw_model(dtype).save(tmp_path / "m.tflite"), n=10)
    assert total > 0 and bad == 0


@pytest.mark.parametrize("target,dtype", [("gap8", "int8"), ("stm32h7", "int8"), ("gap9", "int16")])
def test_nchw_model_validates_bit_exact_with_litert(target, dtype, tmp_path):
    path = nchw_model(dtype).save(tmp_path / "m.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target(target), "model")
    assert Op.TRANSPOSE not in {layer.op for layer in ns.layers.layers}
    r = validate_model(path, ns, graph, 4, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
    m = json.loads((tmp_path / "p" / "tilewise.json").read_text())
    assert m["input"]["model_perm"] == [0, 2, 3, 1] and m["input"]["model_shape"] == [1, 3, 6, 5]
    net = (tmp_path / "p" / "network.c").read_text()
    assert "transposed on its copy into L2" in net
    assert "[1, 3, 6, 5]" in (tmp_path / "p" / "network.h").read_text()
