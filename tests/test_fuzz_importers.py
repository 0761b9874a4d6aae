"""The TFLite and ONNX importers fuzzed for a bounded budget (issue 25; bench/fuzz_importers.py is
the long run): hypothesis draws the seeds of the mutations (bench/fuzzing: byte-level, and field-level on the
parsed protobuf / the flatbuffer's fields) of the shipped models, and each mutated file goes
through `tilewise analyze` in a worker process limited to 10 s and 2 GB of address space. Every
case must end in exit 0 or in exit 2 with one sentence naming the file: no exit 3, no MemoryError,
no hang, no crash. Derandomized, no example database: the same cases on every run.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzzing.mutators import SUFFIX, make_case
from bench.fuzzing.seeds import seed_files
from bench.fuzzing.worker import Limits, Runner

from .conftest import absent, models_dir

#: mutated files per importer (about 15 s each on a 2-core machine)
BUDGET = {"tflite": 120, "onnx": 150}
#: the bounded run skips the slowest seeds (the long run takes them all)
MAX_SEED_BYTES = 1_400_000


@pytest.fixture(scope="module")
def runner():
    with Runner(Limits(seconds=10.0, memory_mb=2048)) as r:
        yield r


def _seeds(importer: str) -> list[tuple[str, bytes]]:
    files = seed_files(models_dir(), importer, MAX_SEED_BYTES)
    if len(files) < (4 if importer == "tflite" else 20):
        absent(f"the shipped {importer} models are missing under {models_dir()} (set TILEWISE_MODELS)")
    return [(f.name if importer == "tflite" else str(Path(*f.parts[-3:])), f.read_bytes()) for f in files]


@pytest.mark.parametrize("importer", ["tflite", "onnx"])
def test_mutated_models_never_exit_3(importer, runner):
    seeds = _seeds(importer)
    seen: dict[str, int] = {}

    @settings(max_examples=BUDGET[importer], derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=("generate", "shrink"))
    @given(st.integers(0, 2 ** 64 - 1))
    def case(seed: int) -> None:
        # hypothesis picks the seeds (reported when a case fails); random.Random(seed) the mutation:
        # hypothesis' own random draws lean on the first models and small values
        name, data, note = make_case(importer, seeds, random.Random(seed))
        out = runner.run(data, SUFFIX[importer])
        seen[out.kind] = seen.get(out.kind, 0) + 1
        assert not out.bug, f"{out.kind} on {name} mutated ({note}): {out.message}"
        if out.kind == "exit2":
            assert "\n" not in out.message and "model" + SUFFIX[importer] in out.message, out.message

    case()
    assert sum(seen.values()) >= BUDGET[importer]
    assert seen.get("exit2", 0) > 0


def test_every_byte_mutation_takes_an_empty_file():
    """A case's mutations compose (truncated to nothing, then bit flips): each one takes an empty
    file (seed 34's run stopped on `bit_flips` of b"" before this)."""
    from bench.fuzzing import mutate_bytes

    rng = random.Random(0)
    for fn in mutate_bytes.MUTATIONS:
        for _ in range(20):
            out, note = mutate_bytes.splice(b"", rng, b"x" * 600) if fn is mutate_bytes.splice else fn(b"", rng)
            assert isinstance(out, bytes) and note
