"""Field-level mutations of a TFLite flatbuffer, made in place on a copy of the bytes.

The `tflite` schema package reads flatbuffers but has no object API to write them back, so the
mutations overwrite the fields where the file stores them (as frontend/tflite_repair.py does): the
model is walked with the schema reader and every stored scalar field and scalar-vector element
and length becomes a *site* — tensor shapes and types, buffer indices, quantization scales,
zero points and quantized_dimension, operator code indices and builtin codes, operator and
subgraph inputs/outputs, every field of every builtin options table, buffer lengths. A site's
position and number type come from the generated class's own accessor (`Offset(slot)` and the
`number_types` flags it reads with), so every table of the schema is covered without a field list.
A mutation writes an interesting value at one site (zero, ±1, the type's extremes, one past a
count, a neighbour's value), changes a vector's length, or swaps two entries of a vector of
tables (tensors, operators, buffers).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import random
import re
import struct
from dataclasses import dataclass
from typing import Any

import flatbuffers

_SCALAR = re.compile(r"Offset\((\d+)\)\)\s+if o != 0:\s+(?:return (?:bool\()?|o = )self\._tab\.Get\("
                     r"flatbuffers\.number_types\.(\w+)Flags, o \+ self\._tab\.Pos\)")
_VECTOR = re.compile(r"Offset\((\d+)\)\)\s+if o != 0:\s+a = self\._tab\.Vector\(o\)\s+return "
                     r"self\._tab\.Get\(flatbuffers\.number_types\.(\w+)Flags, a \+")


_FOCUS = re.compile(r"Shape|Buffer\b|OpcodeIndex|Inputs|Outputs|Scale|ZeroPoint|QuantizedDimension|Type\b|"
                    r"BuiltinCode|length")


@dataclass(frozen=True)
class Site:
    """One stored number: where it is, how it is packed, what it is."""
    what: str
    pos: int
    flags: Any   # flatbuffers.number_types.*Flags
    vector_len: bool = False


def _cls(name: str) -> type:
    return getattr(importlib.import_module(f"tflite.{name}"), name)


@functools.cache
def _fields(name: str) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    """(scalar fields, scalar vector fields) of schema table `name`: (field, slot, number type)."""
    scalars, vectors = [], []
    for attr, fn in inspect.getmembers(_cls(name), inspect.isfunction):
        if attr.startswith("_") or attr.endswith(("AsNumpy", "Length", "IsNone")):
            continue
        src = inspect.getsource(fn)
        m = _SCALAR.search(src)
        if m and "(self):" in src:
            scalars.append((attr, int(m.group(1)), m.group(2)))
        m = _VECTOR.search(src)
        if m and "(self, j):" in src:
            vectors.append((attr, int(m.group(1)), m.group(2)))
    return scalars, vectors


def _flags(kind: str) -> Any:
    return getattr(flatbuffers.number_types, f"{kind}Flags")


def table_sites(obj: Any, name: str, label: str) -> list[Site]:
    """Every stored scalar, vector element and vector length of one table."""
    tab = obj._tab
    sites: list[Site] = []
    scalars, vectors = _fields(name)
    for attr, slot, kind in scalars:
        o = tab.Offset(slot)
        if o:
            sites.append(Site(f"{label}.{attr}", tab.Pos + o, _flags(kind)))
    for attr, slot, kind in vectors:
        o = tab.Offset(slot)
        if not o:
            continue
        start, n = tab.Vector(o), tab.VectorLen(o)
        fl = _flags(kind)
        sites.append(Site(f"{label}.{attr}.length", start - 4, flatbuffers.number_types.Uint32Flags, True))
        for j in range(min(n, 64)):
            sites.append(Site(f"{label}.{attr}[{j}]", start + j * fl.bytewidth, fl))
    return sites


_OPTION_NAMES: dict[int, str] = {v: k for k, v in vars(_cls("BuiltinOptions")).items() if not k.startswith("_")}


def model_sites(data: bytes) -> tuple[list[Site], list[tuple[str, int, int]], dict[str, int]]:
    """(sites, vectors of tables (label, vector start, length), counts) of a TFLite model."""
    model = _cls("Model").GetRootAs(data, 0)
    sites = table_sites(model, "Model", "model")
    tables: list[tuple[str, int, int]] = []
    counts = {"buffers": model.BuffersLength(), "opcodes": model.OperatorCodesLength()}

    def table_vector(obj: Any, slot: int, label: str) -> None:
        o = obj._tab.Offset(slot)
        if o:
            start, n = obj._tab.Vector(o), obj._tab.VectorLen(o)
            tables.append((label, start, n))
            sites.append(Site(f"{label}.length", start - 4, flatbuffers.number_types.Uint32Flags, True))

    table_vector(model, 6, "operator_codes")
    table_vector(model, 8, "subgraphs")
    table_vector(model, 12, "buffers")
    for i in range(model.OperatorCodesLength()):
        sites += table_sites(model.OperatorCodes(i), "OperatorCode", f"opcode[{i}]")
    for i in range(min(model.BuffersLength(), 4096)):
        buf = model.Buffers(i)
        sites += [s for s in table_sites(buf, "Buffer", f"buffer[{i}]") if "[" not in s.what.split(".")[-1]]
    for s in range(model.SubgraphsLength()):
        sg = model.Subgraphs(s)
        counts["tensors"] = max(counts.get("tensors", 0), sg.TensorsLength())
        sites += table_sites(sg, "SubGraph", f"subgraph[{s}]")
        table_vector(sg, 4, f"subgraph[{s}].tensors")
        table_vector(sg, 10, f"subgraph[{s}].operators")
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            sites += table_sites(t, "Tensor", f"tensor[{i}]")
            q = t.Quantization()
            if q is not None:
                sites += table_sites(q, "QuantizationParameters", f"tensor[{i}].quantization")
        for i in range(sg.OperatorsLength()):
            op = sg.Operators(i)
            sites += table_sites(op, "Operator", f"operator[{i}]")
            name = _OPTION_NAMES.get(op.BuiltinOptionsType())
            table = op.BuiltinOptions()
            if name and name != "NONE" and table is not None:
                opts = _cls(name)()
                opts.Init(table.Bytes, table.Pos)
                sites += table_sites(opts, name, f"operator[{i}].{name}")
    return sites, tables, counts


def _value(site: Site, old: Any, rng: random.Random, counts: dict[str, int]) -> Any:
    fl = site.flags
    if fl.py_type is float:
        return rng.choice((0.0, -0.0, -1.0, 1e-45, 1e-30, 1e30, 3.4e38, float("inf"), float("nan"),
                           old * 2, old / 2, -old))
    bits = fl.bytewidth * 8
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if fl.packer_type.format.lower() == fl.packer_type.format \
        else (0, (1 << bits) - 1)
    if fl.py_type is bool:
        lo, hi = 0, 1
    if site.vector_len:
        cands = [0, 1, old - 1, old + 1, old * 2, old + 1000, 1 << 20, 0x7FFFFFFF, 0xFFFFFFFF]
    else:
        cands = [0, 1, -1, 2, 3, 4, 5, 8, old - 1, old + 1, -old, lo, hi, 255, 1 << 16,
                 counts.get("tensors", 0), counts.get("buffers", 0), counts.get("opcodes", 0)]
    v = rng.choice(cands)
    return min(max(int(v), lo), hi)


def _write(out: bytearray, site: Site, v: Any) -> None:
    fmt = "<" + site.flags.packer_type.format.lstrip("<")
    try:
        struct.pack_into(fmt, out, site.pos, v)
    except (OverflowError, struct.error):   # a float beyond float32
        struct.pack_into(fmt, out, site.pos, float("inf"))


def _read(data: bytes, site: Site) -> Any:
    return struct.unpack_from("<" + site.flags.packer_type.format.lstrip("<"), data, site.pos)[0]


def swap_tables(out: bytearray, label: str, start: int, n: int, rng: random.Random) -> str | None:
    """Two entries of a vector of tables exchanged (their relative offsets recomputed)."""
    if n < 2:
        return None
    i, j = rng.sample(range(n), 2)
    pi, pj = start + 4 * i, start + 4 * j
    ti = pi + struct.unpack_from("<I", out, pi)[0]
    tj = pj + struct.unpack_from("<I", out, pj)[0]
    struct.pack_into("<I", out, pi, tj - pi)
    struct.pack_into("<I", out, pj, ti - pj)
    return f"{label}[{i}] <-> [{j}]"


@functools.lru_cache(maxsize=16)
def _plan(data: bytes) -> tuple[dict[str, list[Site]], list[tuple[str, int, int]], dict[str, int]]:
    """The sites of a seed model grouped by field (e.g. "Shape", "quantization.Scale"), its
    vectors of tables and its counts (cached: the seeds are few and mutated many times)."""
    sites, tables, counts = model_sites(data)
    groups: dict[str, list[Site]] = {}
    for s in sites:
        groups.setdefault(re.sub(r"\[\d+\]", "", s.what.split(".", 1)[-1]), []).append(s)
    return groups, tables, counts


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One to three field-level mutations of the TFLite model `data`."""
    groups, tables, counts = _plan(data)
    keys = sorted(groups)
    # a field first (shapes, indices and quantization twice as often), then one of its sites:
    # the thousands of scales and zero points do not crowd out the few opcode indices
    weights = [2 if _FOCUS.search(k) else 1 for k in keys]
    out = bytearray(data)
    notes = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        if tables and rng.random() < 0.1:
            note = swap_tables(out, *rng.choice(tables), rng)
            if note:
                notes.append(note)
            continue
        site = rng.choice(groups[rng.choices(keys, weights)[0]])
        old = _read(out, site)
        v = _value(site, old, rng, counts)
        _write(out, site, v)
        notes.append(f"{site.what} {old} -> {v}")
    return bytes(out), "tflite: " + "; ".join(notes)
