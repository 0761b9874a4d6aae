"""SVDF test models written with the TFLite schema (tilewise/quantize/tflite_build.py).

TensorFlow 2.21's converter writes no SVDF: its MLIR legalization has no pattern from TensorFlow
ops to tfl.svdf and its composite-function fusion (`experimental_implements`) knows LSTM and
embedding_matmul signatures only, not an SVDF (docs/inputs.md "TFLite"); the legacy TOCO path
that matched SVDF subgraphs is not the TF2 converter's. So these models are built directly as flatbuffers,
quantized as TFLite Micro's keyword model is: int8 input and output, int8 feature weights, int16
time weights and state (a variable tensor, no buffer), int32 bias, fused RELU (LiteRT's integer
SVDF requires it). Weights are random with a fixed seed; the scales are chosen so the state and
the outputs use their ranges (some state values saturate at int16, some outputs at int8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilewise.quantize.tflite_build import ModelBuilder


def add_svdf(b: ModelBuilder, x: int, name: str, rng: np.random.Generator, *, inputs: int, units: int,
             rank: int, memory: int, bias: bool = True, x_scale: float, y_zp: int = 0,
             state_scale: float = 0.004, state_std: float = 8000.0) -> int:
    """An SVDF reading tensor `x` [1, inputs]; returns its output tensor [1, units]. Scales: the
    feature matmul puts the state's codes at a standard deviation of about `state_std` for uniform
    int8 inputs (at 8000 a few saturate at ±32767), the outputs at about 50 (a few saturate at
    int8)."""
    f = units * rank
    wf_scale = state_std * state_scale / (x_scale * 73.0 * 73.0 * np.sqrt(inputs))
    wt_scale = 1.0 / 32768
    y_scale = np.sqrt(rank * memory) * 2309 * state_std * state_scale * wt_scale / 50
    wf = b.const(f"{name}/weights_feature", rng.integers(-127, 128, (f, inputs)), "int8", scale=wf_scale)
    wt = b.const(f"{name}/weights_time", rng.integers(-4000, 4001, (f, memory)), "int16", scale=wt_scale)
    bi = b.const(f"{name}/bias", rng.integers(-4000, 4001, units), "int32",
                 scale=state_scale * wt_scale) if bias else -1
    st = b.tensor(f"{name}/state", (1, f * memory), "int16", scale=state_scale, zero_point=0)
    b.tensors[st].variable = True
    y = b.tensor(f"{name}/out", (1, units), "int8", scale=y_scale, zero_point=y_zp)
    b.op("SVDF", [x, wf, wt, bi, st], [y], "SVDFOptions", Rank=rank, FusedActivationFunction=1)
    return y


def svdf_model(path: Path, *, seed: int = 0, inputs: int = 10, units: int = 16, rank: int = 2,
               memory: int = 8, bias: bool = True, x_zp: int = 3, y_zp: int = -5,
               state_std: float = 8000.0) -> Path:
    """One SVDF: x [1, inputs] int8 → SVDF → y [1, units] int8 (`state_std`: add_svdf)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    b.op_versions["SVDF"] = 3
    x = b.input("x", (1, inputs), "int8", scale=0.05, zero_point=x_zp)
    b.output(add_svdf(b, x, "svdf", rng, inputs=inputs, units=units, rank=rank, memory=memory, bias=bias,
                      x_scale=0.05, y_zp=y_zp, state_std=state_std))
    return b.save(path)


def keyword_model(path: Path, *, seed: int = 1, features: int = 40, classes: int = 4) -> Path:
    """A keyword-spotting model shaped like TFLite Micro's (one 40-feature frame per invocation):
    SVDF (64 filters: 32 units of rank 2, 10 steps of memory) → SVDF (32 filters, rank 1, 10 steps)
    → FULLY_CONNECTED (classes) → SOFTMAX, int8 in and out."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    b.op_versions["SVDF"] = 3
    x = b.input("frame", (1, features), "int8", scale=0.05, zero_point=-2)
    h1 = add_svdf(b, x, "svdf1", rng, inputs=features, units=32, rank=2, memory=10, x_scale=0.05, y_zp=-20)
    h1_scale = b.tensors[h1].scale[0]
    h2 = add_svdf(b, h1, "svdf2", rng, inputs=32, units=32, rank=1, memory=10, x_scale=h1_scale, y_zp=-10)
    w = b.const("fc/weights", rng.integers(-127, 128, (classes, 32)), "int8", scale=0.002)
    bias = b.const("fc/bias", rng.integers(-500, 501, classes), "int32", scale=b.tensors[h2].scale[0] * 0.002)
    logits = b.tensor("fc/out", (1, classes), "int8", scale=0.1, zero_point=0)
    b.op("FULLY_CONNECTED", [h2, w, bias], [logits], "FullyConnectedOptions", FusedActivationFunction=0)
    probs = b.tensor("probs", (1, classes), "int8", scale=1.0 / 256, zero_point=-128)
    b.op("SOFTMAX", [logits], [probs], "SoftmaxOptions", Beta=1.0)
    b.output(probs)
    return b.save(path)
