"""Property test: random layers through schedule → generated C → bit-exact with the golden model.

Hypothesis draws, for each kind, ten layers (TILEWISE_PROP_EXAMPLES) — conv, depthwise, dense, average/max pool or a
residual add — with 1–64 channels (non-multiples of 4 included), 1–40 rows/columns, kernels 1–7, strides 1–3,
asymmetric padding, random zero points and per-channel scales (tests/codegen_cases.py), a
requantization mode (tflite double/single rounding, onnx), a tiler, a core count and a small L1
(starting at 0.5–6 kB and doubled only until the layer can be scheduled), which cuts the layer
into many tiles with border tiles and, for conv/dense, input-channel tiles with partial sums.
The generated project is built with the system compiler and run on random inputs plus the
extremes; outputs must equal `golden.layers.run_layers` bit for bit, the DMA bytes, transfers
and chunks of every inference the schedule's prediction, and the host HAL must see no race.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilewise.errors import TilewiseError
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs, validate_network

from .codegen_cases import LayerSpec, c_cache, layer_graph  # noqa: F401 (fixture)

KINDS = ("conv", "dwconv", "fc", "avgpool", "maxpool", "add")
#: examples per kind (TILEWISE_PROP_EXAMPLES=200 for a local stress run)
EXAMPLES = int(os.environ.get("TILEWISE_PROP_EXAMPLES", "10"))


@st.composite
def specs(draw, kind: str) -> LayerSpec:
    c = draw(st.integers(1, 64))
    k = draw(st.integers(1, 64))
    mode = draw(st.sampled_from(("tflite", "tflite_single", "onnx")))
    if kind == "fc":
        return LayerSpec("fc", c=c, k=k, h=1, w=1, mode=mode)
    h, w = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    if kind == "add":
        return LayerSpec("add", c=c, k=c, h=h, w=w, mode=mode)
    fy, fx = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    sy, sx = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    # pads smaller than the kernel on each side, and enough input for one output
    t, b = draw(st.integers(0, fy - 1)), draw(st.integers(0, fy - 1))
    l, r = draw(st.integers(0, fx - 1)), draw(st.integers(0, fx - 1))
    h = max(h, fy - t - b)
    w = max(w, fx - l - r)
    return LayerSpec(kind, c=c, k=c if kind != "conv" else k, h=h, w=w, fy=fy, fx=fx, sy=sy,
                     sx=sx, pads=(t, l, b, r), mode=mode)


def schedule_small(lg, l1_kb: float, cores: int, tiler: str, target=get_target):
    """Schedule on gap8 (`target("gap8", ...)`) at the smallest L1 from l1_kb upward (doubling)
    that fits the layer, and at last at the part's whole free L1 (a doubling can step over it)."""
    kb = l1_kb
    while True:
        try:
            t, last = target("gap8", l1_kb=kb, cores=cores), False
        except TilewiseError:           # more L1 than the part has: its whole free L1
            t, last = target("gap8", cores=cores), True
        try:
            return schedule_network(lg, t, tiler)
        except TilewiseError:
            if last:
                raise
            kb *= 2


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 2**31 - 1), l1_kb=st.floats(0.5, 6.0),
       cores=st.sampled_from((1, 3, 8)), tiler=st.sampled_from(("model", "model", "dory")))
def test_random_layer_bit_exact(kind, data, seed, l1_kb, cores, tiler, tmp_path_factory, c_cache):
    spec = data.draw(specs(kind), label="layer")
    lg = layer_graph(spec, seed)
    ns = schedule_small(lg, l1_kb, cores, tiler)
    inputs = make_inputs(lg, 2, seed)
    out = tmp_path_factory.mktemp("prop")
    report, project = validate_network(ns, out, inputs, cache=c_cache)
    assert report.bit_exact, (spec, report.to_json())
    assert report.dma_bytes_measured == report.dma_bytes_predicted


def test_property_space_reaches_borders_and_channel_tiles(c_cache, tmp_path_factory):
    """The strategy's small L1 does produce border tiles and input-channel tiles (C-tiled conv
    with partial sums): one fixed draw of each, checked on the schedule, then run."""
    spec = LayerSpec("conv", c=61, k=23, h=37, w=29, fy=5, fx=3, sy=2, sx=1, pads=(2, 0, 1, 2))
    lg = layer_graph(spec, 11)
    ns = schedule_small(lg, 2.0, 8, "model")
    s = ns.schedules[0]
    assert any(t.count > 1 and t.border != t.tile for t in s.tiles)
    assert s.psum, "C not tiled at 2 kB"
    report, _ = validate_network(ns, tmp_path_factory.mktemp("c_tiled"), make_inputs(lg, 2, 1),
                                 cache=c_cache)
    assert report.bit_exact, report.to_json()
