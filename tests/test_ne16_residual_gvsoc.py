"""A conv fused with its residual add (tests/test_ne16_residual.py's block) on GVSoC's
pulp-open-ne16: bit-exact, and the fused layer's cycles held against its prediction
(bindings/ne16/cost.py `residual_out`, fitted on ic_resnet8's three fused layers)."""

from __future__ import annotations

from tilewise.golden.inputs import make_inputs
from tilewise.pipeline import schedule_network
from tilewise.validate import validate_network

from .ne16_forced import ne16_forced
from .test_gvsoc import gvsoc_present  # noqa: F401 (autouse fixture: fail/skip without GVSoC)
from .test_ne16_residual import _fused, residual_block

#: the fused layer's predicted / measured cycles allowed (the NE16 layers' ±15%)
BAND = 0.15


def test_fused_layer_cycles_on_gvsoc(tmp_path):
    """The block on GVSoC's pulp-open-ne16 (its convs on NE16, the last fused with the add, a
    14×16 map of 32 channels): bit-exact, and the fused layer's measured cycles
    within ±15% of its prediction."""
    path = residual_block(tmp_path / "block.tflite", hw=(14, 16), c=32)
    _, fused = _fused(path)
    ns = schedule_network(fused, ne16_forced("pulp-open-ne16", stride_one=True), "model")
    assert ns.placement(2).binding.name == "conv2d_s8_mulh_add"
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(fused, 2), on="gvsoc")
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    layer = j["layers"][2]
    ratio = layer["predicted_cycles"] / layer["measured_cycles"]
    assert abs(ratio - 1) <= BAND, (layer["measured_cycles"], layer["predicted_cycles"], ratio)
