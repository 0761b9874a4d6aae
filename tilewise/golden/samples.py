"""One sample of a network's inputs (or outputs) as the golden model, codegen and validation
pass it around.

A network with one input takes each sample as the input's array itself (what `make_inputs`, the
reference runtimes and the tests have always passed around); a network with several inputs takes
a tuple of arrays, one per input in the graph's input order. Outputs likewise: one array, or a
tuple in the graph's output order. `arrays` turns either form into the tuple, `sample` back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .layers import run_layers


def arrays(names: Sequence[str], x: Any) -> tuple[np.ndarray, ...]:
    """The arrays of sample `x` of the tensors `names`: (x,) for one tensor, else x's items."""
    if len(names) == 1:
        if isinstance(x, (tuple, list)) and len(x) == 1:
            return (np.asarray(x[0]),)
        return (np.asarray(x),)
    if not isinstance(x, (tuple, list)) or len(x) != len(names):
        raise ValueError(f"a sample of {len(names)} tensors ({', '.join(names)}) must be a tuple "
                         f"of {len(names)} arrays")
    return tuple(np.asarray(v) for v in x)


def sample(parts: Sequence[np.ndarray]) -> Any:
    """A sample from one array per tensor: the array itself for one tensor, else the tuple."""
    return parts[0] if len(parts) == 1 else tuple(parts)


def feeds(lg, x: Any) -> dict[str, np.ndarray]:
    """The golden model's feeds of sample `x` of the network `lg`'s inputs."""
    return dict(zip(lg.inputs, arrays(lg.inputs, x)))


def golden_sample(lg, x: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """The golden model on sample `x`: (its outputs as a sample, every value it computed)."""
    values = run_layers(lg, feeds(lg, x), keep_all=True)
    return sample([np.asarray(values[o]) for o in lg.outputs]), values


def golden_outputs(lg, inputs: Sequence[Any]) -> list[Any]:
    """The golden model's outputs of every sample of `inputs`: an array per sample for one
    output, else a tuple of one array per output. A network with state (svdf) runs the samples
    as consecutive inferences from a zero state, as the generated C and LiteRT run them."""
    outs = []
    states: dict[str, np.ndarray] = {}
    for x in inputs:
        values = run_layers(lg, feeds(lg, x), states=states)
        outs.append(sample([np.asarray(values[o]) for o in lg.outputs]))
    return outs


__all__ = ["arrays", "feeds", "golden_outputs", "golden_sample", "sample"]
