"""NE16 run for real: the pulp-open-ne16 target (targets/pulp_open_ne16.py) on GVSoC with NE16 in
the cluster (GVSOC_NE16=1). Its firmware drives the engine through the HAL on NE16's registers
(codegen/c/tw_hal/tw_hal_ne16_pulp_open.c); the outputs must be bit-exact with the golden model,
the jobs and DMA as the schedule predicts, and every NE16 layer reports its NE16 cycles measured
(TW_NE16 lines) next to the prediction (validate/ne16_cycles.py). The small layers run in the
timed build (TILEWISE_NE16_TIMED=1: every job timed alone) and hold NE16's cost model
(bindings/ne16/cost.py, fitted by bench/calibrate_ne16.py) within ±15% of the measurement for
each layer kind: 3×3, 1×1, depthwise, dense, and norm-quant (3×3 and 1×1).

Cases: small one-layer networks forced onto NE16 (tests/test_ne16.py's edge cases that the engine
takes: a 3×3 conv of 17 → 33 channels with an output width of 7 — partial 3×3 subtiles with right
padding, which GVSoC's NE16 pads right only on whole subtiles, so the cores write that padding into
the u8 tile — cut into L1 tiles and row jobs; a padded depthwise of 40 channels in 16-channel k
tiles; a dense layer), the NEMO-style shift-mode network with NE16's norm-quant, and kws_dscnn
with the partition's own choice (its 4 depthwise and 4 pointwise layers on NE16, and its first
layer through the im2col binding).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tilewise.targets.registry import get_target

from .ne16_forced import ne16_forced
from .test_gvsoc import gvsoc_present  # noqa: F401 (autouse fixture: fail/skip without GVSoC)

#: LayerSpec fields: kind, c, k, h, w, fy, fx, sy, sx, pads, mode (tests/test_ne16.py EDGE_SPECS)
SMALL = {
    "conv_c17_k33_w7": ("conv", 17, 33, 6, 7, 3, 3, 1, 1, (1, 1, 1, 1), "tflite"),
    "conv1x1_c40_k24_7x5": ("conv", 40, 24, 7, 5, 1, 1, 1, 1, (0, 0, 0, 0), "tflite"),
    "dw_c40_pads": ("dwconv", 40, 40, 6, 6, 3, 3, 1, 1, (0, 1, 1, 0), "tflite"),
    "fc_c70": ("fc", 70, 13, 1, 1, 1, 1, 1, 1, (0, 0, 0, 0), "tflite"),
    # norm-quant: the layer in NE16's shift form (bindings/ne16/shift_requant.py), int8 clamp
    "conv1x1_c40_k24_7x5_nq": ("conv", 40, 24, 7, 5, 1, 1, 1, 1, (0, 0, 0, 0), "nq"),
    "conv_c17_k33_w7_nq": ("conv", 17, 33, 6, 7, 3, 3, 1, 1, (1, 1, 1, 1), "nq"),
}


def _forced(l1_kb: float | None = None, nq_only: bool = False):
    """pulp-open-ne16 with NE16 running every stride-1 layer its checks accept
    (tests/ne16_forced.py); `nq_only`: NE16's cluster-requantized shift bindings left out."""
    return ne16_forced("pulp-open-ne16", nq_only, stride_one=True, l1_kb=l1_kb)


#: NE16's predicted / measured cycles allowed per layer kind (bench/calibrate_ne16.py's fit)
BAND = 0.15


def _check_ne16(r: dict, on: list[int], band: float | None = None) -> None:
    """Bit-exact, jobs and DMA as predicted, NE16 cycles measured for every layer of `on`; with
    `band`, each within it of the prediction (a timed build: no job ended before its wait)."""
    assert r["bit_exact"], r["mismatches"][:2]
    assert r["platform"] == "gvsoc"
    assert r["jobs_measured"] == r["jobs_predicted"] > 0
    assert r["dma_bytes_measured"] == r["dma_bytes_predicted"]
    for i in on:
        layer = r["layers"][i]
        assert layer["ne16_measured_cycles"] > 0 and layer["ne16_predicted_cycles"] > 0, layer
        assert 0 < layer["ne16_measured_cycles"] <= layer["measured_cycles"], layer
        if band is not None:
            assert layer["ne16_early_jobs"] == 0, layer
            ratio = layer["ne16_predicted_cycles"] / layer["ne16_measured_cycles"]
            assert abs(ratio - 1) <= band, (layer["name"], layer["kind"], ratio)


def test_target_data():
    """pulp-open-ne16 is pulp-open plus an ne16 module whose bindings write the bottom / right
    padding into the u8 tile (no u8-input twins) and refuse stride 2 with a reason."""
    from tilewise.bindings.ne16 import checks

    from .codegen_cases import LayerSpec, layer_graph

    t, base = get_target("pulp-open-ne16"), get_target("pulp-open")
    assert [m.name for m in t.modules] == [*(m.name for m in base.modules), "ne16"]
    assert t.platform.name == "pulp-open-ne16" and t.platform.runner("gvsoc").ne16
    names = {b.name for b in t.module("ne16").bindings}
    assert {"conv2d_s8_mulh", "conv2d_s8_nq", "depthwise_s8_mulh", "fully_connected_s8_nq"} <= names
    assert not any("u8in" in n for n in names)
    lg = layer_graph(LayerSpec("conv", c=16, k=8, h=9, w=9, fy=3, fx=3, sy=2, sx=2,
                               pads=(0, 0, 1, 1)), 0)
    layer = lg.layers[-1]
    assert checks.ne16(layer, lg) is None
    b = next(b for b in t.module("ne16").bindings if b.key.op == "conv2d")
    assert "stride 2" in b.check(layer, lg)
    assert base.modules == t.modules[:-1]


@pytest.mark.parametrize("case", list(SMALL))
def test_small_layers_bit_exact_on_ne16(case, tmp_path, monkeypatch):
    """One layer on NE16 at 2 kB of L1 (many tiles, row jobs, border tiles): bit-exact on GVSoC's
    NE16, jobs and DMA as predicted, its NE16 cycles (timed build) within ±15% of the model."""
    monkeypatch.setenv("TILEWISE_NE16_TIMED", "1")
    from tilewise.pipeline import schedule_network
    from tilewise.validate import make_inputs, validate_network

    from .codegen_cases import LayerSpec, layer_graph

    kind, c, k, h, w, fy, fx, sy, sx, pads, mode = SMALL[case]
    nq = mode == "nq"
    lg = layer_graph(LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, sy=sy, sx=sx, pads=pads,
                               mode="tflite" if nq else mode), 1)
    last = len(lg.layers) - 1
    if nq:                      # an int8 clamp NE16 saturates to, then NE16's shift form
        from tilewise.bindings.ne16.shift_requant import to_shift_requant

        layer = lg.layers[last]
        rq = replace(layer.requant, qmin=-128, qmax=127)
        lg, _ = to_shift_requant(replace(lg, layers=(*lg.layers[:last], replace(layer, requant=rq))))
    ns = schedule_network(lg, _forced(l1_kb=2, nq_only=nq), "model")
    assert ns.placement(last).module.name == "ne16"
    assert ns.placement(last).binding.name.endswith("_nq") == nq
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 2), on="gvsoc")
    _check_ne16(r.to_json(), [last], BAND)


def test_norm_quant_on_ne16(tmp_path):
    """The NEMO-style shift-mode network (tests/onnx_models.py nemo_net): its 1×1 conv and its
    dense layer requantized by NE16's norm-quant on GVSoC, bit-exact with the golden model and
    onnxruntime. (Their NE16 cycles are not held to the band: the 1×1 conv, 8 channels on 4×4
    pixels, is a 299-cycle job the model puts at 0.69 of it — bench/calibration_ne16.json; the
    small layers above hold norm-quant's kinds.)"""
    import onnx

    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate import validate_model

    from . import onnx_models as om

    path = tmp_path / "nemo.onnx"
    onnx.save(om.nemo_net(), str(path))
    graph = load_model(path)
    ns = schedule_network(lower(graph), _forced(nq_only=True), "model")
    labels = [ns.placement(i).binding.label for i in range(len(ns.layers.layers))]
    on = [i for i, b in enumerate(labels) if b.endswith("_nq")]
    assert len(on) == 2, labels
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["reference"] == "onnxruntime"
    _check_ne16(r, on)


#: an NE16 layer's whole cycles (NE16's row jobs, the cluster's conversion, requantization and job
#: programming) predicted / measured allowed (bindings/ne16/cost.py GVSOC_CLUSTER)
LAYER_BAND = 0.10


def test_kws_dscnn_on_ne16(tmp_path):
    """kws_dscnn on pulp-open-ne16 as the partition places it (analyze's layers[].module): its
    depthwise and pointwise layers on NE16, and its first layer (10×4, stride 2, one channel) as
    a 1×1 job over the cluster's im2col (bindings/ne16/im2col.py), bit-exact on GVSoC, jobs as
    predicted, each NE16 layer's whole cycles (the cluster's side included:
    tests/test_ne16_cluster_fit.py; the im2col's, Ne16Im2col) within LAYER_BAND of the
    prediction."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate import validate_model

    from .conftest import mlperf_path

    path = mlperf_path("kws_dscnn")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("pulp-open-ne16"), "model")
    on = [i for i in range(len(ns.layers.layers)) if ns.placement(i).module.name == "ne16"]
    kinds = sorted(ns.layers.layers[i].nest.kind for i in on)
    assert kinds == ["conv"] * 5 + ["dwconv"] * 4, kinds
    assert ns.placement(0).binding.name == "conv2d_s8_im2col2_mulh", ns.placement(0).label
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p", on="gvsoc").to_json()
    _check_ne16(r, on)
    ratios = {r["layers"][i]["name"]: r["layers"][i]["predicted_cycles"] / r["layers"][i]["measured_cycles"]
              for i in on}
    assert not {k: round(v, 3) for k, v in ratios.items() if abs(v - 1) > LAYER_BAND}, ratios
