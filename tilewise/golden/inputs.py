"""The network inputs every check draws: uniformly random codes over each input's integer range,
then the all-minimum and all-maximum inputs.

`make_inputs(lg, n, seed)` is what `validate` runs a project on and what `generate` writes as the
project's input.bin (its first sample, seed 0); `input_chunks` yields the same inputs, from the
same random stream and in the same order (the extremes last), at most `chunk` at a time, so that
validation on many inputs holds one chunk in memory (validate/chunked.py). A sample is the
input's array, or with several inputs a tuple of one array per input (samples.py), each drawn in
turn from the stream.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..ir.layer import LayerGraph
from ..ir.tensor import dtype_range, np_dtype
from .samples import sample

#: inputs per chunk: a few MB of inputs and outputs for the MLPerf Tiny models
CHUNK = 256


def input_chunks(lg: LayerGraph, n: int, seed: int = 0,
                 chunk: int = CHUNK) -> Iterator[list[Any]]:
    """`make_inputs(lg, n, seed)` in chunks of at most `chunk` (the last one holds the extremes)."""
    ts = [lg.tensors[name] for name in lg.inputs]
    ranges = [dtype_range(t.dtype) for t in ts]
    dts = [np_dtype(t.dtype) for t in ts]
    rng = np.random.default_rng(seed)

    def draw() -> Any:
        return sample([rng.integers(lo, hi + 1, size=t.shape).astype(dt)
                       for t, (lo, hi), dt in zip(ts, ranges, dts)])

    def extreme(which: int) -> Any:
        return sample([np.full(t.shape, r[which], dt) for t, r, dt in zip(ts, ranges, dts)])

    done = 0
    while True:
        k = min(chunk, n - done)
        xs = [draw() for _ in range(k)]
        done += k
        if done == n:
            if len(xs) + 2 > chunk and xs:
                yield xs
                xs = []
            yield xs + [extreme(0), extreme(1)]
            return
        yield xs


def n_chunks(n: int, chunk: int = CHUNK) -> int:
    """How many chunks `input_chunks` yields for n random inputs."""
    full, rest = divmod(n, chunk)
    return full + (1 if rest + 2 <= chunk else 2) if rest else full + 1


def make_inputs(lg: LayerGraph, n: int, seed: int = 0) -> list[Any]:
    """n uniformly random inputs over the input's integer range, then the all-min and all-max
    (`input_chunks` as one chunk)."""
    return [x for xs in input_chunks(lg, n, seed, chunk=n + 2) for x in xs]
