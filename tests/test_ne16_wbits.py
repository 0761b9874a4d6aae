"""NE16 with 2- to 7-bit weights (bindings/ne16: the `_w<b>` bindings): the layer's LoopNest.w_bits
picks the bindings (set here with dataclasses.replace on the lowered layers, the weights narrowed
into the range first), the constants hold w_bits bit planes, the job is programmed with them and
the functional model on gap9 with NE16 forced is bit-exact with the golden model; the prediction
and the weight bytes drop with the planes; weights outside the nest's bits, or bits outside 2..8,
are refused with a reason."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.ir.layer import LayerGraph

from .codegen_cases import LayerSpec, layer_graph
from .test_ne16 import _ne16_forced


def narrowed(lg: LayerGraph, bits: int, names: set[str] | None = None) -> LayerGraph:
    """`lg` with the weights of its weighted layers (those in `names`, default all) rescaled
    into the signed `bits` range and their nests' w_bits set to `bits`."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    layers = []
    for layer in lg.layers:
        if layer.weights is not None and (names is None or layer.name in names):
            w = np.asarray(layer.weights)
            scale = max(float(np.abs(w).max()), 1.0) / hi
            q = np.clip(np.round(w / scale), lo, hi).astype(w.dtype)
            layer = replace(layer, weights=q, nest=replace(layer.nest, w_bits=bits))
        layers.append(layer)
    return replace(lg, layers=tuple(layers))


SPECS = {  # LayerSpec fields: kind, c, k, h, w, fy, fx, sy, sx, pads
    "conv_c17_k33": ("conv", 17, 33, 6, 7, 3, 3, 1, 1, (1, 1, 1, 1)),
    "conv_s2_asym": ("conv", 5, 7, 9, 8, 3, 3, 2, 2, (0, 0, 1, 1)),
    "conv1x1_c40": ("conv", 40, 9, 5, 5, 1, 1, 1, 1, (0, 0, 0, 0)),
    "dw_c40": ("dwconv", 40, 40, 6, 6, 3, 3, 1, 1, (0, 1, 1, 0)),
    "fc_c70": ("fc", 70, 13, 1, 1, 1, 1, 1, 1, (0, 0, 0, 0)),
}


def _spec(case: str) -> LayerSpec:
    kind, c, k, h, w, fy, fx, sy, sx, pads = SPECS[case]
    return LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, sy=sy, sx=sx, pads=pads)


@pytest.mark.parametrize("bits", [2, 3, 4, 6])
@pytest.mark.parametrize("case", list(SPECS))
def test_sub8_weights_bit_exact_on_ne16(case, bits, tmp_path):
    """A layer whose weights fit `bits` bits, w_bits set, on gap9 with NE16 forced and 2 kB of
    L1 (many k tiles: the packed planes' offsets per tile): the `_w<bits>` binding runs it,
    bit-exact with the golden model, the row jobs as predicted."""
    from tilewise.pipeline import schedule_network
    from tilewise.validate import make_inputs, validate_network

    lg = narrowed(layer_graph(_spec(case), 1), bits)
    last = len(lg.layers) - 1
    ns = schedule_network(lg, _ne16_forced().with_overrides(l1_kb=2), "model")
    label = ns.placement(last).binding.label
    assert label.startswith("ne16/") and f"_s8_w{bits}" in label, label
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 2))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] >= 1


@pytest.mark.parametrize("case", ["conv_c17_k33", "conv1x1_c40", "dw_c40"])
def test_prediction_and_weight_bytes_drop_with_the_planes(case):
    """The same layer at 8, 6, 4, 3, 2 weight bits on NE16 (whole layer in L1): the predicted
    cycles and the constant bytes strictly decrease with the bits, and NE16's matrix-vector
    cycles are MATCH's 6 + taps·bits per input block (bindings/ne16/cost.py, engine "match")."""
    from tilewise.bindings.ne16.cost import Ne16Kernels
    from tilewise.pipeline import schedule_network

    base = layer_graph(_spec(case), 1)
    last = len(base.layers) - 1
    cycles, consts = [], []
    for bits in (8, 6, 4, 3, 2):
        lg = base if bits == 8 else narrowed(base, bits)
        ns = schedule_network(lg, _ne16_forced(), "model")
        assert ns.placement(last).module.name == "ne16"
        cycles.append(ns.layer_cycles(last))
        consts.append(ns.const_bytes(ns.layers.layers[last]))
    assert all(a > b for a, b in zip(cycles, cycles[1:])), cycles
    assert all(a > b for a, b in zip(consts, consts[1:])), consts
    nest = base.layers[last].nest
    taps = nest.FY * nest.FX
    for bits in (8, 2):
        m = Ne16Kernels(weight_bits=bits, engine="match")
        one = Ne16Kernels(weight_bits=1, engine="match")
        assert m._block(nest) - one._block(nest) == taps * (bits - 1)


def test_norm_quant_with_4bit_weights(tmp_path):
    """The NEMO-style shift-mode graph (tests/onnx_models.py nemo_net) with its 1×1 conv's weights
    in 4 bits: NE16 requantizes it itself (conv2d_s8_w4_nq), bit-exact with the golden model."""
    import onnx

    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate import make_inputs, validate_network

    from . import onnx_models as om

    path = tmp_path / "nemo.onnx"
    onnx.save(om.nemo_net(), str(path))
    lg = narrowed(lower(load_model(path)), 4, {"conv2"})
    ns = schedule_network(lg, _ne16_forced(norm_quant=True), "model")
    labels = {ns.layers.layers[i].name: ns.placement(i).binding.label
              for i in range(len(lg.layers))}
    assert labels["conv2"] == "ne16/conv2d_s8_w4_nq", labels
    assert labels["fc"] == "ne16/fully_connected_s8_nq", labels     # still 8-bit
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] > 0


def test_checks_refuse_weights_outside_their_bits():
    """checks.ne16 reads the bits from the nest: weights beyond them, or bits NE16 lacks, are
    refused with the reason; within them the layer is taken."""
    from tilewise.bindings.ne16 import checks

    lg = layer_graph(_spec("conv_c17_k33"), 1)
    layer = lg.layers[-1]
    assert checks.ne16(layer, lg) is None
    wide = replace(layer, nest=replace(layer.nest, w_bits=4))        # int8 values, 4-bit nest
    assert "outside the 4-bit range [-8, 7]" in checks.ne16(wide, lg)
    four = narrowed(lg, 4).layers[-1]
    assert checks.ne16(four, lg) is None
    assert int(np.abs(np.asarray(four.weights)).max()) <= 8
    for bits in (1, 16):
        odd = replace(four, nest=replace(four.nest, w_bits=bits))
        assert f"{bits}-bit weights (NE16 takes 2 to 8)" == checks.ne16(odd, lg)
