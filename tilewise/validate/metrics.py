"""Error metrics between two sets of network outputs, as `stm32ai validate` reports them.

Pure numpy functions, no I/O. `a` is what is judged (the generated C's outputs), `b` what it is
held against (the reference runtime's outputs, the user's expected outputs); both are float
arrays [N, ...] — N inputs — in real (dequantized) terms, `dequantize` turning quantized outputs
into them (real = scale · (q − zero_point)).

- rmse = sqrt(mean((a − b)²)), mae = mean(|a − b|), over every element of every input;
- l2r  = ‖a − b‖₂ / ‖b‖₂ (relative L2 error over all elements; 0 when both are all zero, None
  when only b is);
- cos  = ⟨a, b⟩ / (‖a‖₂ ‖b‖₂) (cosine similarity of the flattened sets, clipped to [−1, 1]; 1 when
  both are all zero, None when only one is);
- acc  = the fraction of inputs whose argmax over the output vector agrees (classifiers only: an
  output that is one vector per input, `is_classifier`); argmax ties go to the lowest index
  (numpy's rule), the same for both sides;
- accuracy / confusion matrix against integer class labels: rows are the true class, columns the
  predicted one (argmax).
Undefined values are None, never NaN or inf, so the JSON stays valid. Sums are in float64.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """real = scale · (q − zero_point), in float64 (scale taken as the float32 the model stores)."""
    return float(np.float32(scale)) * (np.asarray(q, dtype=np.float64) - int(zero_point))


def _pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"metrics need equal shapes, got {a.shape} and {b.shape}")
    return a.reshape(-1), b.reshape(-1)


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    x, y = _pair(a, b)
    return float(np.sqrt(np.mean((x - y) ** 2))) if x.size else 0.0


def mae(a: np.ndarray, b: np.ndarray) -> float:
    x, y = _pair(a, b)
    return float(np.mean(np.abs(x - y))) if x.size else 0.0


def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    x, y = _pair(a, b)
    return float(np.max(np.abs(x - y))) if x.size else 0.0


def mean_error(a: np.ndarray, b: np.ndarray) -> float:
    """mean(a − b): the bias of a against b."""
    x, y = _pair(a, b)
    return float(np.mean(x - y)) if x.size else 0.0


def l2r(a: np.ndarray, b: np.ndarray) -> float | None:
    """‖a − b‖ / ‖b‖; 0 when a = b = 0, None when only b is all zero."""
    x, y = _pair(a, b)
    num, den = float(np.linalg.norm(x - y)), float(np.linalg.norm(y))
    if den == 0.0:
        return 0.0 if num == 0.0 else None
    return num / den


def cos(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cosine similarity of the flattened a and b; 1 when both are all zero, None when one is."""
    x, y = _pair(a, b)
    return cos_of_sums(float(np.dot(x, y)), float(np.dot(x, x)), float(np.dot(y, y)))


def cos_of_sums(ab: float, aa: float, bb: float) -> float | None:
    """`cos` from the sums Σab, Σa², Σb² (accumulated over chunks of inputs)."""
    if aa == 0.0 or bb == 0.0:
        return 1.0 if aa == bb else None
    return min(1.0, max(-1.0, ab / (np.sqrt(aa) * np.sqrt(bb))))   # rounding can pass ±1


def is_classifier(per_input_shape: Sequence[int]) -> bool:
    """One output vector of at least 2 classes per input (the batch dim of 1 and other 1s ignored)."""
    dims = [int(d) for d in per_input_shape if int(d) != 1]
    return len(dims) == 1 and dims[0] >= 2


def predictions(out: np.ndarray) -> np.ndarray:
    """Argmax class per input of outputs [N, ...] (flattened per input)."""
    out = np.asarray(out)
    return np.argmax(out.reshape(out.shape[0], -1), axis=1)


def argmax_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of inputs whose argmax agrees (outputs [N, ...])."""
    pa, pb = predictions(a), predictions(b)
    return float(np.mean(pa == pb)) if pa.size else 0.0


def accuracy(pred: np.ndarray, labels: np.ndarray) -> float:
    pred, labels = np.asarray(pred).reshape(-1), np.asarray(labels).reshape(-1)
    return float(np.mean(pred == labels)) if pred.size else 0.0


def confusion_matrix(labels: np.ndarray, pred: np.ndarray, classes: int) -> np.ndarray:
    """[classes, classes] counts: row = true label, column = predicted class."""
    m = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(m, (np.asarray(labels, dtype=np.int64).reshape(-1),
                  np.asarray(pred, dtype=np.int64).reshape(-1)), 1)
    return m


def compare(a: np.ndarray, b: np.ndarray, classifier: bool) -> dict[str, Any]:
    """The metrics of a against b (real values, [N, ...]): the `metrics.vs_*` entries' numbers."""
    return {"inputs": int(np.asarray(a).shape[0]), "elements": int(np.asarray(a).size),
            "acc": argmax_agreement(a, b) if classifier else None,
            "rmse": rmse(a, b), "mae": mae(a, b), "max_abs": max_abs(a, b),
            "l2r": l2r(a, b), "cos": cos(a, b)}


__all__ = ["accuracy", "argmax_agreement", "compare", "confusion_matrix", "cos", "cos_of_sums", "dequantize",
           "is_classifier", "l2r", "mae", "max_abs", "mean_error", "predictions",
           "rmse"]
