"""The layout of the network input as the caller holds it, when it differs from the IR's.

A PyTorch-exported TFLite model takes an NCHW input and opens with TRANSPOSE perm (0, 2, 3, 1).
The frontend folds that transpose into the layout (frontend/tflite_layout.py): the graph's input is
the transpose's NHWC output and meta["input_perm"] = perm records that

    ir_input = model_input.transpose(perm)

so the generated `tw_network_run` takes the model's own (NCHW) input and transposes it while copying
it into its L2 place (codegen/network_c.py), the golden model runs on the IR input, and the tools that
feed the model or the generated code (validate's reference runner and harness, the firmware inputs)
turn an IR input into the model's with `model_input` (`to_model_layout` with the perm a project's
manifest records as input.model_perm).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

INPUT_PERM = "input_perm"


def input_perm(meta: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The folded input permutation (ir = model.transpose(perm)), None when the layouts agree."""
    p = meta.get(INPUT_PERM)
    return tuple(int(v) for v in p) if p is not None else None


def inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, v in enumerate(perm):
        inv[v] = i
    return tuple(inv)


def to_model_layout(x: np.ndarray, perm: tuple[int, ...] | list[int] | None) -> np.ndarray:
    """The IR input `x` in the caller's layout given the folded `perm` (None or empty: as is)."""
    return np.ascontiguousarray(np.asarray(x).transpose(inverse(tuple(perm))) if perm else x)


def model_input(meta: Mapping[str, Any], x: np.ndarray) -> np.ndarray:
    """The model's input (the caller's layout) holding the IR input `x`."""
    return to_model_layout(x, input_perm(meta))


def model_input_shape(meta: Mapping[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the model's input for an IR input of `shape`."""
    p = input_perm(meta)
    return tuple(shape) if p is None else tuple(shape[i] for i in inverse(p))


__all__ = ["INPUT_PERM", "input_perm", "inverse", "model_input", "model_input_shape", "to_model_layout"]
