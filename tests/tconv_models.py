"""TFLite TRANSPOSE_CONV models built with tests/tflite_builder.py (int8 and 16x8)."""

from __future__ import annotations

import numpy as np

from .tflite_builder import ModelBuilder


def transpose_conv(dtype: str = "int8", in_hw: tuple[int, int] = (4, 5), c: int = 3, k: int = 4,
                   f: tuple[int, int] = (3, 3), stride: tuple[int, int] = (2, 2), padding: int = 0,
                   out_hw: tuple[int, int] | None = None, bias: bool = True, act: int = 0,
                   seed: int = 7) -> ModelBuilder:
    """x [1, H, W, c] → TRANSPOSE_CONV (k filters f, stride, SAME = 0 / VALID = 1) → y. `out_hw`
    defaults to the size TensorFlow gives (SAME: H·s; VALID: (H − 1)·s + f)."""
    r, b = np.random.RandomState(seed), ModelBuilder()
    wide = dtype == "int16"
    if out_hw is None:
        out_hw = tuple(h * s if padding == 0 else (h - 1) * s + ff for h, s, ff in zip(in_hw, stride, f))
    xq = dict(scale=0.0004, zero_point=0) if wide else dict(scale=0.05, zero_point=-7)
    yq = dict(scale=0.0011, zero_point=0) if wide else dict(scale=0.09, zero_point=5)
    x = b.input("x", (1, *in_hw, c), dtype, **xq)
    w = b.const("w", r.randint(-127, 128, (k, *f, c)).astype(np.int8), "int8",
                scale=r.uniform(0.005, 0.03, k), zero_point=0)
    shape = b.const("output_shape", np.array((1, *out_hw, k), np.int32), "int32")
    ins = [shape, w, x]
    if bias:
        ins.append(b.const("b", r.randint(-3000, 3000, k), "int64" if wide else "int32",
                           scale=np.full(k, 1e-4), zero_point=0))
    y = b.tensor("y", (1, *out_hw, k), dtype, **yq)
    b.op("TRANSPOSE_CONV", ins, [y], "TransposeConvOptions", Padding=padding,
         StrideW=stride[1], StrideH=stride[0], FusedActivationFunction=act)
    b.output(y)
    return b
