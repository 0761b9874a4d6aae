"""One entry point per importer: a mutated file made from a seed model, byte-level or
structure-aware (field-level), with a description of what was changed."""

from __future__ import annotations

import random

from . import mutate_bytes, mutate_onnx, mutate_tflite

IMPORTERS = ("tflite", "onnx")
SUFFIX = {"tflite": ".tflite", "onnx": ".onnx"}
#: share of the cases mutated field by field (the rest byte by byte)
STRUCTURED = 0.6


def mutate(importer: str, data: bytes, rng: random.Random, other: bytes | None = None) -> tuple[bytes, str]:
    """A mutation of the seed model `data` for `importer`; `other`: another model to splice from.
    Field-level mutations sometimes get byte-level ones on top."""
    if rng.random() >= STRUCTURED:
        return mutate_bytes.mutate(data, rng, other)
    fn = mutate_tflite.mutate if importer == "tflite" else mutate_onnx.mutate
    out, note = fn(data, rng)
    if rng.random() < 0.1:
        out, more = mutate_bytes.mutate(out, rng, other)
        note += "; " + more
    return out, note


def make_case(importer: str, seeds: list[tuple[str, bytes]], rng: random.Random) -> tuple[str, bytes, str]:
    """(seed name, mutated bytes, description): a seed model picked by `rng`, mutated; another
    seed is the splice source."""
    name, data = seeds[rng.randrange(len(seeds))]
    other = seeds[rng.randrange(len(seeds))][1]
    out, note = mutate(importer, data, rng, other)
    return name, out, note
