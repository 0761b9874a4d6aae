"""A conv fused with its residual add on NE16 (passes/fuse_residual.py, bindings/ne16/residual.py:
conv2d_s8_mulh_add and its u8-input twin): a small TFLite residual block — conv 3×3 + ReLU, conv
3×3, ADD of that and the block's input with ReLU — fused and run bit-exact on the host (gap9, in
int8 and with the u8 hand-off; pulp-open-ne16's data-padded form) against the golden model of the
unfused layers and LiteRT; the fusion's choice by the cost model. On GVSoC:
tests/test_ne16_residual_gvsoc.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.golden.inputs import make_inputs
from tilewise.golden.layers import run_layers
from tilewise.ir.ops import Op
from tilewise.passes import fuse_residual, lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import validate_network

from .conftest import mlperf_path
from .ne16_forced import ne16_forced
from .tflite_builder import ACT, SAME, ModelBuilder, litert_interpreter, litert_invoke

R = np.random.RandomState(29)


def _conv(b: ModelBuilder, x: int, c: int, k: int, hw: tuple[int, int], name: str, act: str) -> int:
    w = b.const(f"{name}_w", R.randint(-127, 128, (k, 3, 3, c)).astype(np.int8), "int8",
                scale=R.uniform(0.002, 0.01, k), zero_point=0)
    bias = b.const(f"{name}_b", R.randint(-3000, 3000, k).astype(np.int32), "int32",
                   scale=np.full(k, 1e-4), zero_point=0)
    y = b.tensor(name, (1, *hw, k), "int8", scale=0.05, zero_point=-5 if act == "NONE" else -128)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=ACT[act], DilationWFactor=1, DilationHFactor=1)
    return y


def residual_block(path: Path, hw: tuple[int, int] = (9, 12), c: int = 16) -> Path:
    """x → conv 3×3 + ReLU (the stem: the skip tensor a layer writes) → conv 3×3 + ReLU → conv
    3×3 → ADD(·, stem) + ReLU → conv 3×3 + ReLU (a reader of the add's output), int8, saved to
    `path`."""
    b = ModelBuilder()
    x = b.input("x", (1, *hw, c), "int8", scale=0.04, zero_point=3)
    x = _conv(b, x, c, c, hw, "a", "RELU")
    h = _conv(b, x, c, c, hw, "h", "RELU")
    g = _conv(b, h, c, c, hw, "g", "NONE")
    y = b.tensor("y", (1, *hw, c), "int8", scale=0.07, zero_point=-128)
    b.op("ADD", [g, x], [y], "AddOptions", FusedActivationFunction=ACT["RELU"])
    b.output(_conv(b, y, c, c, hw, "z", "RELU"))
    return b.save(path)


def _fused(path: Path):
    """The block lowered, and with its conv + add fused whatever the cost model says."""
    lg = lower(load_model(str(path)))
    fused = fuse_residual(lg, lambda *a: True)
    assert [str(layer.op) for layer in fused.layers] == ["conv2d", "conv2d", "conv2d_add", "conv2d"]
    return lg, fused


def test_fused_golden_equals_the_two_layers_and_litert(tmp_path):
    """The fused layer's golden output is the conv's then the add's, and LiteRT's."""
    path = residual_block(tmp_path / "block.tflite")
    lg, fused = _fused(path)
    it = litert_interpreter(path)
    for x in make_inputs(lg, 4):
        want = run_layers(lg, [x])[lg.outputs[0]]
        got = run_layers(fused, [x])[fused.outputs[0]]
        ref = next(iter(litert_invoke(it, [x]).values()))
        assert np.array_equal(got, want) and np.array_equal(got.reshape(-1), ref.reshape(-1))
    assert fused.layers[2].inputs == (lg.layers[2].inputs[0], lg.layers[0].output)
    assert lg.layers[2].output not in fused.tensors    # the conv's int8 output is gone


@pytest.mark.parametrize("target,binding,out", [("gap9", "conv2d_s8_mulh_add_u8in", 128),
                                                ("gap9-int8", "conv2d_s8_mulh_add", 0),
                                                ("pulp-open-ne16", "conv2d_s8_mulh_add", 0)])
def test_fused_block_bit_exact_on_the_host(target, binding, out, tmp_path):
    """Generated C bit-exact with the golden model on the host at 4 kB of L1 (several tiles, row
    jobs, the skip tile DMA'd as operand x2): gap9 hands the input and the skip tensor over as u8
    (the twin) and the output too (`out`), gap9-int8 keeps them int8 (the u8 twins left out),
    pulp-open-ne16 writes the padding."""
    path = residual_block(tmp_path / "block.tflite")
    _, fused = _fused(path)
    name = target.removesuffix("-int8")
    t = ne16_forced(name, stride_one=True, l1_kb=4)
    if target.endswith("-int8"):
        from dataclasses import replace

        t = replace(t, modules=tuple(replace(m, bindings=tuple(b for b in m.bindings
                                                               if "u8in" not in b.name))
                                     for m in t.modules))
    ns = schedule_network(fused, t, "model")
    p = ns.placement(2)
    assert (p.module.name, p.binding.name) == ("ne16", binding)
    assert ns.partition.choices[2].out_offset == out
    s = ns.schedules[2]
    assert s.nest.residual and "x2" in {b.name for b in s.buffers} and s.n_tiles > 1
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(fused, 3))
    assert r.bit_exact, r.mismatches[:2]
    assert r.dma_bytes_measured == r.dma_bytes_predicted




def test_fusion_takes_the_input_of_the_larger_saving():
    """Where both of an add's inputs are convs it could fuse (ic_resnet8's downsampling blocks:
    the 3×3 conv and the 1×1 stride-2 shortcut), the pass fuses the one `accept` saves more on;
    none where it saves nothing."""
    lg = lower(load_model(str(mlperf_path("ic_resnet8"))))
    names = {layer.name for layer in lg.layers}
    assert {"op5_conv_2d", "op6_conv_2d", "op9_conv_2d", "op10_conv_2d"} <= names

    def fused(gain):
        g = fuse_residual(lg, lambda f, conv, add, lg_: gain(conv.name))
        return sorted(layer.name for layer in g.layers if layer.op == Op.CONV2D_ADD)

    assert fused(lambda n: 2.0 if n in ("op6_conv_2d", "op10_conv_2d") else 1.0) == \
        ["op10_conv_2d", "op2_conv_2d", "op6_conv_2d"]
    assert fused(lambda n: 1.0 if n in ("op6_conv_2d", "op10_conv_2d") else 2.0) == \
        ["op2_conv_2d", "op5_conv_2d", "op9_conv_2d"]
    assert fused(lambda n: None if n == "op2_conv_2d" else -1.0) == []


def test_cost_model_chooses_the_fusion_where_cheaper():
    """ic_resnet8 on gap9: every residual add fused into a conv before it (the model prices the
    fused layer below the conv and the add; of the downsampling blocks' two convs the 3×3 one,
    which saves more), the add rows gone from the schedule; on pulp-open (no NE16) nothing is
    fused."""
    from tilewise.pipeline import compile

    model = mlperf_path("ic_resnet8")
    ns = compile(model, get_target("gap9"))
    ops = [str(layer.op) for layer in ns.layers.layers]
    assert ops.count("conv2d_add") == 3 and "add" not in ops
    assert [layer.name for layer in ns.layers.layers if layer.op == Op.CONV2D_ADD] == \
        ["op2_conv_2d", "op5_conv_2d", "op9_conv_2d"]
    assert all(ns.placement(i).binding.name.startswith("conv2d_s8_mulh_add")
               for i, o in enumerate(ops) if o == "conv2d_add")
    assert Op.ADD in {layer.op for layer in compile(model, get_target("pulp-open")).layers.layers}
