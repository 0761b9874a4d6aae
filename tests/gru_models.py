"""GRU models as TensorFlow 2.21's converter writes them, for tests/test_gru.py.

`convert(out_dir)` writes, in one subprocess (TensorFlow imported once, away from the test
process), Keras GRU models (tf_keras: Keras 3's recurrent layers crash TF 2.21's calibrator)
with seeded weights and seeded calibration data, full-integer int8 (int8 input and output):

- `gru49.tflite`: keyword-spotting sized — 49 steps × 10 features → GRU(32, unroll=True) →
  Dense(4); the converter unrolls it into UNPACK, FULLY_CONNECTED, SPLIT, SPLIT_V, LOGISTIC,
  TANH, MUL, ADD, SUB (and computes every step's input projection first);
- `gru3.tflite`: the same with 3 steps (the generated-C tests: first step and two general ones);
- `gru_while.tflite`: GRU(32) without unroll — a WHILE over a body subgraph. TF 2.21's int8
  calibration of that loop crashes (segmentation fault), so this one is converted with dynamic-
  range quantization (float activations), as a user without unroll gets it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODELS = {"gru49.tflite": (49, True), "gru3.tflite": (3, True), "gru_while.tflite": (8, False)}
FEATURES, UNITS, CLASSES = 10, 32, 4


def _convert_all(out: Path) -> None:   # runs in the subprocess
    import numpy as np
    import tensorflow as tf
    import tf_keras

    for name, (steps, unroll) in MODELS.items():
        tf_keras.utils.set_random_seed(0)
        x = tf_keras.Input((steps, FEATURES), batch_size=1)
        h = tf_keras.layers.GRU(UNITS, unroll=unroll)(x)
        model = tf_keras.Model(x, tf_keras.layers.Dense(CLASSES)(h))
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        if unroll:
            rng = np.random.default_rng(0)

            def data(rng=rng, steps=steps):
                for _ in range(32):
                    yield [rng.standard_normal((1, steps, FEATURES)).astype(np.float32)]

            conv.representative_dataset = data
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        (out / name).write_bytes(conv.convert())


def convert(out_dir: Path) -> dict[str, Path]:
    """Convert the MODELS into `out_dir` (a subprocess); their paths by name. Raises
    RuntimeError with the subprocess's last lines when TensorFlow or tf_keras is missing or the
    conversion fails."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", "import sys; from tests.gru_models import _convert_all; "
                           "from pathlib import Path; _convert_all(Path(sys.argv[1]))", str(out_dir)],
                          cwd=root, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise RuntimeError(f"converting the GRU models with TensorFlow failed ({proc.returncode}): {tail}")
    return {name: out_dir / name for name in MODELS}
