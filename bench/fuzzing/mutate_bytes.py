"""Format-blind mutations of a model file's bytes: what a bad download, a truncated copy or a
disk error leaves behind. Each mutation returns the new bytes and a short description of what it
did (offsets in bytes), so that a failing case can be re-made from its description.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

#: values a fuzzer writes where a length, an index or an offset was
INTERESTING_32 = (0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF,
                  0x80000000, 0xFFFFFFFF, 0xFFFFFFFE)


def _pos(rng: random.Random, n: int) -> int:
    return rng.randrange(max(n, 1))


def bit_flips(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    if not data:            # an earlier mutation of the case truncated it to nothing
        return data, "no bit to flip (empty)"
    out = bytearray(data)
    k = rng.choice((1, 1, 2, 4, 8, 32))
    for _ in range(k):
        i = _pos(rng, len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out), f"{k} bit flips"


def byte_overwrite(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    out = bytearray(data)
    i = _pos(rng, len(out))
    k = min(rng.choice((1, 2, 4, 16)), len(out) - i)
    for j in range(k):
        out[i + j] = rng.randrange(256)
    return bytes(out), f"{k} random bytes at {i}"


def int32_overwrite(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """An interesting 32-bit value at a 4-aligned offset (flatbuffer offsets, lengths, indices)."""
    if len(data) < 8:
        return bit_flips(data, rng)
    i = rng.randrange(len(data) // 4 - 1) * 4
    v = rng.choice(INTERESTING_32)
    out = bytearray(data)
    struct.pack_into("<I", out, i, v)
    return bytes(out), f"uint32 {v:#x} at {i}"


def varint_overwrite(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A protobuf-style varint (a length or an integer field) made huge or zero."""
    out = bytearray(data)
    i = _pos(rng, len(out))
    v = rng.choice((b"\x00", b"\x7f", b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
    out[i:i + len(v)] = v
    return bytes(out[:len(data) + 8]), f"varint {v.hex()} at {i}"


def truncate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    n = rng.choice((rng.randrange(max(len(data), 1)), len(data) // 2, len(data) - 1, 16, 8))
    n = max(0, min(n, len(data) - 1))
    return data[:n], f"truncated to {n} bytes"


def delete_range(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    i = _pos(rng, len(data))
    k = rng.choice((1, 4, 16, 256))
    return data[:i] + data[i + k:], f"{k} bytes deleted at {i}"


def duplicate_range(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    i = _pos(rng, len(data))
    k = rng.choice((1, 4, 16, 256))
    return data[:i + k] + data[i:i + k] + data[i + k:], f"{k} bytes at {i} repeated"


def splice(data: bytes, rng: random.Random, other: bytes | None = None) -> tuple[bytes, str]:
    """A chunk of another file (or of this one) put in at a random place, overwriting."""
    src = other if other else data
    k = rng.choice((4, 16, 64, 512))
    j = _pos(rng, max(len(src) - k, 1))
    i = _pos(rng, len(data))
    out = bytearray(data)
    out[i:i + k] = src[j:j + k]
    return bytes(out), f"{k} bytes of {'another model' if other else 'itself'} from {j} spliced at {i}"


MUTATIONS: tuple[Callable[[bytes, random.Random], tuple[bytes, str]], ...] = (
    bit_flips, byte_overwrite, int32_overwrite, varint_overwrite, truncate, delete_range,
    duplicate_range, splice)


def mutate(data: bytes, rng: random.Random, other: bytes | None = None) -> tuple[bytes, str]:
    """One to three byte-level mutations of `data` (`other`: a model to splice from)."""
    notes = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        fn = rng.choice(MUTATIONS)
        data, note = splice(data, rng, other) if fn is splice else fn(data, rng)
        notes.append(note)
    return data, "bytes: " + "; ".join(notes)
