"""TFLite models with ops only a host core's module ("cpu") takes (bindings/portable/host.py), built
with tests/tflite_builder.py: for tests/test_cpu_module.py and bench/calibrate_cpu.py."""

from __future__ import annotations

import numpy as np

from .tflite_builder import SAME, ModelBuilder


def _conv(b: ModelBuilder, r: np.random.RandomState, x: int, c: int, k: int, f: int,
          hw: tuple[int, int], name: str, dtype: str = "int8", scale: float = 0.05,
          zp: int = -3) -> int:
    """A CONV_2D (stride 1, SAME) of k f×f filters from c channels, output `dtype` (int16: a 16x8
    conv with an int64 bias)."""
    w = b.const(f"{name}_w", r.randint(-127, 128, (k, f, f, c)).astype(np.int8), "int8",
                scale=r.uniform(0.002, 0.02, k), zero_point=0)
    wide = dtype == "int16"
    bias = b.const(f"{name}_b", r.randint(-2000, 2000, k), "int64" if wide else "int32",
                   scale=np.full(k, 1e-4), zero_point=0)
    y = b.tensor(name, (1, *hw, k), dtype, scale=scale, zero_point=0 if wide else zp)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=0, DilationWFactor=1, DilationHFactor=1)
    return y


def conv_requant_conv(seed: int = 3) -> ModelBuilder:
    """conv → QUANTIZE int8 → int8 (a new scale and zero point) → 1×1 conv."""
    r, b = np.random.RandomState(seed), ModelBuilder()
    x = b.input("x", (1, 8, 8, 4), "int8", scale=0.05, zero_point=-3)
    h = _conv(b, r, x, 4, 8, 3, (8, 8), "h")
    q = b.tensor("q", (1, 8, 8, 8), "int8", scale=0.031, zero_point=7)
    b.op("QUANTIZE", [h], [q])
    b.output(_conv(b, r, q, 8, 6, 1, (8, 8), "y"))
    return b


def requant_16(seed: int = 4) -> ModelBuilder:
    """conv → QUANTIZE int8 → int16 → 16x8 conv → QUANTIZE int16 → int8."""
    r, b = np.random.RandomState(seed), ModelBuilder()
    x = b.input("x", (1, 6, 6, 4), "int8", scale=0.05, zero_point=-3)
    h = _conv(b, r, x, 4, 8, 3, (6, 6), "h", scale=0.04, zp=5)
    q = b.tensor("q", (1, 6, 6, 8), "int16", scale=0.0007, zero_point=0)
    b.op("QUANTIZE", [h], [q])
    g = _conv(b, r, q, 8, 5, 3, (6, 6), "g", dtype="int16", scale=0.0009)
    y = b.tensor("y", (1, 6, 6, 5), "int8", scale=0.11, zero_point=-9)
    b.op("QUANTIZE", [g], [y])
    b.output(y)
    return b


def transpose_concat(seed: int = 5, perm: tuple[int, ...] = (0, 2, 1, 3),
                     axis: int = 3) -> ModelBuilder:
    """conv → TRANSPOSE(perm) → CONCATENATION of three inputs (the transpose, a second conv of
    the input, the input itself) on `axis` → conv; square maps so that every permutation of H
    and W keeps the shapes the concatenation needs (perm must keep N and C in place when axis
    is 3)."""
    r, b = np.random.RandomState(seed), ModelBuilder()
    q = dict(scale=0.05, zero_point=-3)
    x = b.input("x", (1, 6, 6, 4), "int8", **q)
    h = _conv(b, r, x, 4, 4, 3, (6, 6), "h")
    p = b.const("perm", np.array(perm, np.int32), "int32")
    t = b.tensor("t", tuple(np.array((1, 6, 6, 4))[list(perm)]), "int8", **q)
    b.op("TRANSPOSE", [h, p], [t], "TransposeOptions")
    g = _conv(b, r, x, 4, 4, 1, (6, 6), "g")
    shape = [1, 6, 6, 4]
    shape[axis] *= 3
    c = b.tensor("c", tuple(shape), "int8", **q)
    b.op("CONCATENATION", [t, g, x], [c], "ConcatenationOptions", Axis=axis,
         FusedActivationFunction=0)
    oc = shape[3]
    b.output(_conv(b, r, c, oc, 6, 3, (shape[1], shape[2]), "y"))
    return b


def host_ops(n: int = 16, seed: int = 6) -> ModelBuilder:
    """Larger host-only layers for the cost fit (bench/calibrate_cpu.py): a transpose NHWC →
    NCHW of n×n×16, a concatenation of four inputs on axis 1, a requantization of it."""
    b = ModelBuilder()
    q = dict(scale=0.05, zero_point=-3)
    x = b.input("x", (1, n, n, 16), "int8", **q)
    p = b.const("perm", np.array((0, 3, 1, 2), np.int32), "int32")
    t = b.tensor("t", (1, 16, n, n), "int8", **q)
    b.op("TRANSPOSE", [x, p], [t], "TransposeOptions")
    c = b.tensor("c", (1, 64, n, n), "int8", **q)
    b.op("CONCATENATION", [t, t, t, t], [c], "ConcatenationOptions", Axis=1,
         FusedActivationFunction=0)
    y = b.tensor("y", (1, 64, n, n), "int8", scale=0.03, zero_point=11)
    b.op("QUANTIZE", [c], [y])
    b.output(y)
    return b
