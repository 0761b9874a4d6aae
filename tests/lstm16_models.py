"""16x8 LSTM test models (int16 activations, int8 weights) written with the TFLite schema
(tilewise/quantize/tflite_build.py).

TensorFlow 2.21's converter refuses to write the 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM ("Quantization to
16x8-bit not yet supported for op: 'UNIDIRECTIONAL_SEQUENCE_LSTM'"), so these models are built
directly, quantized as TFLite Micro's own 16x8 LSTM test data is (kernels/testdata/lstm_test_data):
symmetric int16 input, output and hidden state (zero point 0), per-tensor symmetric int8 weights,
int64 biases (scale s_x·s_w), an int16 cell state with a power-of-two scale, both states variable
tensors without a buffer, no intermediates (TFLM's integer LSTM reads none), no peephole,
projection or layer norm. Weights are random with a fixed seed; the scales put the gates'
pre-activations at a standard deviation of about 2 (Q3.12 spans ±8) for uniform int16 inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilewise.quantize.tflite_build import ModelBuilder

TANH = 4


def lstm16_model(path: Path, *, seed: int = 0, steps: int = 49, n_input: int = 10, n_cell: int = 32,
                 batch: int = 1, time_major: bool = False, x_scale: float = 1.0 / 8192,
                 h_scale: float = 1.0 / 32768, cell_log2: int = -11, cell_clip: float = 0.0) -> Path:
    """One 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM: x int16 [B, T, I] (or [T, B, I]) → y int16, every step's h."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    x = b.input("x", shape, "int16", scale=x_scale, zero_point=0)
    wx_scale = 2.0 / (np.sqrt(n_input) * 73.3 * 8192 * x_scale * 2.31)
    wh_scale = 1.0 / (np.sqrt(n_cell) * 73.3 * 0.5)
    gates = ("input", "forget", "cell", "output")
    wx = [b.const(f"lstm/w_x_{g}", rng.integers(-127, 128, (n_cell, n_input)), "int8",
                  scale=wx_scale * (0.8 + 0.1 * k)) for k, g in enumerate(gates)]
    wh = [b.const(f"lstm/w_h_{g}", rng.integers(-127, 128, (n_cell, n_cell)), "int8",
                  scale=wh_scale * (1.1 - 0.1 * k)) for k, g in enumerate(gates)]
    bias = []
    for k, g in enumerate(gates):
        s = x_scale * wx_scale * (0.8 + 0.1 * k)
        real = rng.uniform(-1.0, 1.0, n_cell) + (1.0 if g == "forget" else 0.0)
        bias.append(b.const(f"lstm/bias_{g}", np.round(real / s), "int64", scale=s))
    h = b.tensor("lstm/output_state", (batch, n_cell), "int16", scale=h_scale, zero_point=0)
    c = b.tensor("lstm/cell_state", (batch, n_cell), "int16", scale=2.0 ** cell_log2, zero_point=0)
    b.tensors[h].variable = True
    b.tensors[c].variable = True
    y_shape = (steps, batch, n_cell) if time_major else (batch, steps, n_cell)
    y = b.tensor("y", y_shape, "int16", scale=h_scale, zero_point=0)
    inputs = [x, *wx, *wh, -1, -1, -1, *bias, -1, -1, h, c, -1, -1, -1, -1]
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], "UnidirectionalSequenceLSTMOptions",
         FusedActivationFunction=TANH, CellClip=cell_clip, ProjClip=0.0, TimeMajor=time_major)
    b.output(y)
    return b.save(path)


#: name -> keyword arguments of lstm16_model: a keyword-spotting-sized LSTM (49 frames of 10 MFCCs,
#: 32 cells) and a small one (two time-major sequences, a cell clip, a cell scale of 2^-13 — tanh
#: of the cell state then shifts right — and a hidden scale that is not a power of two)
MODELS: dict[str, dict] = {
    "kws16": dict(seed=0, steps=49, n_input=10, n_cell=32),
    "small16": dict(seed=1, steps=6, n_input=5, n_cell=8, batch=2, time_major=True, cell_log2=-13,
                    cell_clip=1.5, h_scale=0.9 / 32768, x_scale=1.0 / 4096),
}


def lstm16(name: str, out: Path) -> Path:
    return lstm16_model(out / f"lstm_{name}.tflite", **MODELS[name])


def tflm_run(path: Path, x: np.ndarray) -> np.ndarray:
    """TFLite Micro's interpreter (the tflite-micro package) on one input, from a fresh state."""
    from tflite_micro.python.tflite_micro import runtime

    it = runtime.Interpreter.from_file(str(path), arena_size=1 << 20)
    it.set_input(np.asarray(x, dtype=np.int16), 0)
    it.invoke()
    return np.asarray(it.get_output(0))
