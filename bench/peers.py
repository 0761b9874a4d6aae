"""The peers we did not write, driven the way their users drive them.

- TFLM: the `tflite-micro` Python package's interpreter (its default kernels), `invoke()` timed
  from Python; arena usage from `print_allocations()` (RecordingMicroAllocator: total, head =
  the non-persistent planned buffers, tail = persistent), read in a child process because the
  package prints it from C++ to stderr.
- LiteRT: `ai_edge_litert.interpreter.Interpreter(num_threads=1)` with the default op resolver
  (XNNPACK delegate applied), `invoke()` timed from Python.
Both run the benchmark input (models.model_input) n times back to back. TFLM's planner reuses the
input tensor's arena bytes for later activations, so an invoke clobbers its own input: each TFLM
inference is set_input + invoke (one copy of the input). LiteRT keeps its input tensor intact
across invokes (host_exec checks the output after the timed rounds), so it is invoked alone.
Times include the Python call of invoke(), which the notes of table 1 state.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import models

TFLM_ARENA = 4 << 20
PROBE = Path(__file__).resolve().parent / "peer_proc.py"


class TflmRunner:
    def __init__(self, path: Path, name: str):
        from tflite_micro.python.tflite_micro import runtime

        self.it = runtime.Interpreter.from_file(str(path), arena_size=TFLM_ARENA)
        d = self.it.get_input_details(0)
        self.input = models.model_input(name, tuple(d["shape"]), np.dtype(d["dtype"]))
        self.it.set_input(self.input, 0)
        self.it.invoke()
        self.first = self.output().copy()

    def time(self, n: int) -> float:
        """Seconds per inference (set_input + invoke) over n back-to-back inferences."""
        inv, put, x = self.it.invoke, self.it.set_input, self.input
        t0 = time.perf_counter()
        for _ in range(n):
            put(x, 0)
            inv()
        return (time.perf_counter() - t0) / n

    def output(self) -> np.ndarray:
        return np.asarray(self.it.get_output(0))


class LiteRtRunner:
    def __init__(self, path: Path, name: str):
        from ai_edge_litert.interpreter import Interpreter

        self.it = Interpreter(model_path=str(path), num_threads=1)
        self.it.allocate_tensors()
        d = self.it.get_input_details()[0]
        self.input = models.model_input(name, tuple(d["shape"]), np.dtype(d["dtype"]))
        self.it.set_tensor(d["index"], self.input)
        self._out = self.it.get_output_details()[0]["index"]
        self.it.invoke()
        self.first = self.output().copy()

    def time(self, n: int) -> float:
        inv = self.it.invoke
        t0 = time.perf_counter()
        for _ in range(n):
            inv()
        return (time.perf_counter() - t0) / n

    def output(self) -> np.ndarray:
        return np.asarray(self.it.get_tensor(self._out))


_ALLOC = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def tflm_arena(name: str) -> dict[str, int]:
    """TFLM's arena usage after one invoke: {'total', 'head', 'tail'} in bytes."""
    proc = subprocess.run([sys.executable, str(PROBE), "arena", name], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"TFLM arena probe failed for {name}: {proc.stderr.strip()[-500:]}")
    found = dict((k, int(v)) for k, v in _ALLOC.findall(proc.stdout + proc.stderr))
    if set(found) != {"total", "head", "tail"}:
        raise RuntimeError(f"TFLM print_allocations gave no arena totals for {name}")
    return found


def tflm_invoke_command(name: str, n: int) -> list[str]:
    """A Python process that loads the model, invokes once (warm-up), then n more times."""
    return [sys.executable, str(PROBE), "invokes", name, str(n)]


def reference_output(path: Path, name: str) -> np.ndarray:
    """The bit-exact reference for int8 TFLite semantics: LiteRT with its reference kernels
    (OpResolverType.BUILTIN_REF, the contract of tilewise's golden model), on the benchmark input."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], models.model_input(name, tuple(d["shape"]), np.dtype(d["dtype"])))
    it.invoke()
    return np.asarray(it.get_tensor(it.get_output_details()[0]["index"])).copy()
