"""Keras LSTM models quantized by TensorFlow's converter (int8, full integer), for the LSTM tests.

Each builder makes a tf_keras model with fixed seeds (`import tf_keras`: Keras 3's LSTM crashes TF
2.21's calibrator), calibrates it on a fixed representative set and writes the int8 TFLite file
(int8 input and output) — what `TFLiteConverter` with optimizations DEFAULT, a representative
dataset and TFLITE_BUILTINS_INT8 writes for an LSTM: one UNIDIRECTIONAL_SEQUENCE_LSTM with its
five intermediates (and a STRIDED_SLICE of the last step when return_sequences is False).
`float_lstm` and `hybrid_lstm` write the forms tilewise refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def _keras(layers: Callable[[Any], list], shape: tuple[int, int], seed: int) -> Any:
    import tf_keras

    tf_keras.utils.set_random_seed(seed)
    return tf_keras.Sequential([tf_keras.Input(shape, batch_size=1), *layers(tf_keras.layers)])


def _convert(model: Any, path: Path, shape: tuple[int, int], quant: str = "int8") -> Path:
    import numpy as np
    import tensorflow as tf

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if quant in ("int8", "hybrid"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if quant == "int8":
        rng = np.random.default_rng(7)
        data = [rng.standard_normal((1, *shape)).astype(np.float32) for _ in range(16)]

        def rep():
            for x in data:
                yield [x]

        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    path.write_bytes(conv.convert())
    return path


#: name -> (layers, input shape (steps, features)): a keyword-spotting LSTM (49 MFCC frames of 10),
#: the full sequence out of a smaller one, two stacked layers
MODELS: dict[str, tuple[Callable[[Any], list], tuple[int, int]]] = {
    "kws": (lambda L: [L.LSTM(32), L.Dense(12)], (49, 10)),
    "sequence": (lambda L: [L.LSTM(20, return_sequences=True)], (12, 6)),
    "stacked": (lambda L: [L.LSTM(16, return_sequences=True), L.LSTM(8)], (10, 5)),
}


def int8_lstm(name: str, out: Path, seed: int = 0) -> Path:
    layers, shape = MODELS[name]
    return _convert(_keras(layers, shape, seed), out / f"lstm_{name}.tflite", shape)


def float_lstm(out: Path) -> Path:
    layers, shape = MODELS["sequence"]
    return _convert(_keras(layers, shape, 0), out / "lstm_float.tflite", shape, "float")


def hybrid_lstm(out: Path) -> Path:
    layers, shape = MODELS["sequence"]
    return _convert(_keras(layers, shape, 0), out / "lstm_hybrid.tflite", shape, "hybrid")


def with_cell_clip(path: Path, clip: float, out: Path) -> Path:
    """A copy of an int8 LSTM model whose every LSTM has the cell clip `clip` (the converter writes
    Keras' 10.0 into the options table: patched in place, the float32 field at its offset)."""
    import struct

    from tilewise.frontend.tflite import _schema

    data = bytearray(path.read_bytes())
    sg = _schema("Model").Model.GetRootAs(data, 0).Subgraphs(0)
    options = _schema("UnidirectionalSequenceLSTMOptions").UnidirectionalSequenceLSTMOptions
    patched = 0
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if op.BuiltinOptionsType() != _schema("BuiltinOptions").BuiltinOptions.UnidirectionalSequenceLSTMOptions:
            continue
        table = op.BuiltinOptions()
        o = options()
        o.Init(table.Bytes, table.Pos)
        field = o._tab.Offset(6)       # cell_clip: the second field
        assert field, "the converter wrote no cell_clip field"
        struct.pack_into("<f", data, o._tab.Pos + field, clip)
        patched += 1
    assert patched
    dst = out / f"{path.stem}_clip{clip}.tflite"
    dst.write_bytes(bytes(data))
    return dst
