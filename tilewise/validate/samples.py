"""One sample of a network's inputs (or outputs) as validation handles it.

A network with one input takes each sample as the input's array itself (what `make_inputs`, the
reference runtimes and the tests have always passed around); a network with several inputs takes
a tuple of arrays, one per input in the graph's input order. Outputs likewise: one array, or a
tuple in the graph's output order. `arrays` turns either form into the tuple, `sample` back.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


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
    from ..golden.layers import run_layers

    values = run_layers(lg, feeds(lg, x), keep_all=True)
    return sample([np.asarray(values[o]) for o in lg.outputs]), values


__all__ = ["arrays", "feeds", "golden_sample", "sample"]
