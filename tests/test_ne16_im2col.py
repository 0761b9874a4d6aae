"""NE16's im2col bindings (bindings/ne16/im2col.py): a conv NE16 does not take natively run as a
1×1 job over the cluster's u8 im2col — the channel padding of the taps, which layers the
bindings take, and small convs bit-exact on the host through NE16's functional model (cut into
L1 tiles and row jobs). Their cost against GVSoC: tests/test_ne16_engine_gvsoc.py (kws_dscnn's
10×4 stride-2 first layer on pulp-open-ne16)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tilewise.bindings.ne16 import im2col
from tilewise.ir.layer import LoopNest
from tilewise.targets.registry import get_target


def test_taps_padded_to_whole_blocks():
    """The least padding of C that makes FY·FX·c_pad whole 16-channel blocks (every packed
    weight byte a counted one)."""
    def pad(fy, fx, c):
        return im2col.c_pad(LoopNest(kind="conv", K=8, C=c, OY=4, OX=4, FY=fy, FX=fx))

    assert pad(10, 4, 1) == 2          # kws_dscnn's first layer: 80 channels per pixel
    assert pad(3, 3, 3) == 16
    assert pad(2, 2, 4) == 1
    assert pad(4, 4, 3) == 1
    assert pad(5, 5, 8) == 16
    n = LoopNest(kind="conv", K=8, C=1, OY=4, OX=4, FY=10, FX=4)
    assert im2col.cols(n) == 80 and im2col.job_nest(n).C == 80


def _forced_convs(l1_kb: float):
    """gap9 with its cluster and host core refusing conv2d: NE16 (its im2col bindings here)."""
    t = get_target("gap9")

    def refusing(b):
        def check(layer, lg):
            return "forced onto NE16" if b.key.op == "conv2d" else b.check(layer, lg)
        return replace(b, check=check)

    mods = tuple(m if m.name == "ne16" else replace(m, bindings=tuple(refusing(b) for b in m.bindings))
                 for m in t.modules)
    return replace(t, modules=mods).with_overrides(l1_kb=l1_kb)


CASES = {  # LayerSpec fields: kind, c, k, h, w, fy, fx, sy, sx, pads
    "k5x3_s2x1_c1": ("conv", 1, 12, 13, 6, 5, 3, 2, 1, (2, 1, 2, 1)),
    "k3x3_pad2_c3": ("conv", 3, 9, 9, 8, 3, 3, 1, 1, (2, 2, 2, 2)),
    "k7x7_s2_c5": ("conv", 5, 20, 15, 11, 7, 7, 2, 2, (3, 3, 3, 3)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_im2col_convs_bit_exact(case, tmp_path):
    from tilewise.pipeline import schedule_network
    from tilewise.validate import make_inputs, validate_network

    from .codegen_cases import LayerSpec, layer_graph

    kind, c, k, h, w, fy, fx, sy, sx, pads = CASES[case]
    lg = layer_graph(LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, sy=sy, sx=sx, pads=pads,
                               mode="tflite"), 1)
    ns = schedule_network(lg, _forced_convs(6), "model")
    i = len(lg.layers) - 1
    assert ns.placement(i).binding.name.startswith("conv2d_s8_im2col"), ns.placement(i).label
    assert ns.schedules[i].n_tiles > 1
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] >= ns.schedules[i].n_tiles


def test_native_convs_are_not_taken():
    """A conv NE16 runs as it is never takes the im2col form (the *_s8 bindings do), nor do
    1×1 kernels or weights narrower than 8 bits."""
    from .codegen_cases import LayerSpec, layer_graph

    lg = layer_graph(LayerSpec("conv", c=8, k=8, h=6, w=6, fy=3, fx=3, sy=1, sx=1,
                               pads=(1, 1, 1, 1), mode="tflite"), 1)
    layer = lg.layers[-1]
    assert "as it is" in im2col.reason(layer, lg, im2col.c_pad(layer.nest))
    narrow = replace(layer, nest=replace(layer.nest, w_bits=4, pads=(2, 2, 2, 2)))
    assert im2col.reason(narrow, lg, im2col.c_pad(narrow.nest)) is not None
