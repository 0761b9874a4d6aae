"""The user's data for `validate --data/--expected` and `--golden DIR`, read against the model:
every network input and output, the code type of integer exports' inputs, the per-layer golden
tensors.

- `--data FILE --expected FILE`: one array per network input (output) — a .npy or a directory for
  a network with one, a .npz keyed by the tensors' names or in their order for any (data.py
  `read_arrays`; an exporter's inputs.npz listing the model's weights after its inputs, as
  Deeploy's does, has those skipped). N samples, the same N in every array.
- `--golden DIR`: DORY's folder (golden_files.py): input.txt is the one input, output.txt (when
  present) the expected output, the out_layerN.txt the per-layer golden tensors.
- Deeploy's activations.npz beside the --data .npz (or `--activations FILE`): per-layer golden
  tensors of the first sample.

Integer exports (NEMO, QuantLab, Deeploy) carry their input codes in float32 or wide integer
containers, and the codes' type is a property of the data (frontend/__init__.py `load_model`'s
`input_dtypes`). Without `--input-dtype` the type of each such input is inferred from the data —
the narrowest of int8, uint8, int16, int32 holding every value, uint8 rather than int8 when none is
negative (data.py `infer_code_dtype`) — the model is read again with it (or read with it in the
first place when the frontend refuses the default types, `_dtypes_from_data`), and one note says
which `--input-dtype` makes `generate` write the same C.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilewiseError
from ..golden.samples import sample
from ..ir.graph import Graph
from ..ir.layer import LayerGraph
from .data import (
    EdgeSpec,
    UserArray,
    check_count,
    container_inputs,
    infer_code_dtype,
    input_specs,
    integral_codes,
    onnx_input_order,
    output_specs,
    read_arrays,
    to_ir,
)
from .golden_files import GoldenTensor, check_counts, input_array, read_activations, read_dory_folder


@dataclass
class UserData:
    """The user's data read against the model (module docstring)."""

    graph: Graph
    lg: LayerGraph
    ispecs: list[EdgeSpec]
    ospecs: list[EdgeSpec]
    #: N samples of the network inputs (golden/samples.py), IR layout and dtypes
    inputs: list[Any]
    #: how the data was read: the first input's, with every input's under "arrays" when several
    data_desc: dict[str, Any]
    #: per output: [N, *IR shape] integers (compared bit for bit) or floats (metrics only)
    expected: list[np.ndarray] | None = None
    expected_desc: list[dict[str, Any]] | None = None
    #: the per-layer golden tensors, in execution order (DORY's out_layerN, Deeploy's activations)
    golden: list[GoldenTensor] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _load(model: str | Path, input_dtypes: Mapping[str, str] | None) -> tuple[Graph, LayerGraph]:
    from ..pipeline import Options, load, lower

    graph = load(model, Options(input_dtypes=dict(input_dtypes or {})))
    return graph, lower(graph)


def _golden_input(folder, spec: EdgeSpec) -> UserArray:
    """DORY's input.txt as the model's input array (its ONNX layout), one sample."""
    return UserArray(input_array(folder.input, spec.model_shape, "input"), str(folder.input.file))


def _golden_output(folder, spec: EdgeSpec) -> UserArray:
    """DORY's output.txt as the model's output array (its ONNX layout), one sample."""
    return UserArray(input_array(folder.output, spec.model_shape, "output"),
                     str(folder.output.file))


def infer_input_dtypes(graph: Graph, ispecs: list[EdgeSpec], raw: list[UserArray]
                       ) -> tuple[dict[str, str], str | None]:
    """The code type of every container input (data.py `container_inputs`) from its values, and
    the note saying so; ({}, None) when the model has none."""
    conts = container_inputs(graph)
    if not conts:
        return {}, None
    found: dict[str, str] = {}
    spans = []
    for e in conts:
        k = next(i for i, sp in enumerate(ispecs) if sp.names[0] == e["onnx"])
        arr = raw[k].array
        if arr.dtype.kind not in "iuf" or arr.size == 0:
            return {}, None   # to_ir says what is wrong with it
        vals = integral_codes(arr, raw[k].source, "inputs") if arr.dtype.kind == "f" else arr
        found[e["onnx"]] = infer_code_dtype(vals)
        spans.append(f"'{e['onnx']}' {found[e['onnx']]} ([{int(vals.min())}, {int(vals.max())}])")
    option = (next(iter(found.values())) if len(set(found.values())) == 1
              else ",".join(f"{k}={v}" for k, v in found.items()))
    note = (f"input codes read as {', '.join(spans)} from the data (the narrowest type holding "
            f"them); give `generate --input-dtype {option}` for the same C")
    return found, note


def _dtypes_from_data(model: str | Path, data: str | Path | None,
                      golden: str | Path | None) -> dict[str, str]:
    """The code types of an ONNX model's float / wide-integer inputs read from the data alone,
    before the model is: for a model the frontend refuses with its default input types (Deeploy's
    int32 MatMul inputs whose products overflow int32 are int8 codes). {} when the data does not
    say (a non-ONNX model, non-integer values, unreadable data)."""
    from onnx import helper

    from ..frontend.onnx_lower import WIDE_CONTAINERS
    from ..frontend.onnx_model import decode_model
    from .data import HALF_EVEN

    try:
        g = decode_model(Path(model).read_bytes(), str(model)).graph
        inits = {t.name for t in g.initializer}
        ins = [(vi.name, np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)).name)
               for vi in g.input if vi.name not in inits]
        specs = [EdgeSpec((n,), (), (), None, "int32", None, 0, HALF_EVEN, "") for n, _ in ins]
        if golden is not None:
            folder = read_dory_folder(golden)
            raw = [UserArray(folder.input.values, folder.input.file)] if len(ins) == 1 else []
        else:
            raw, _ = read_arrays(data, "inputs", specs, onnx_input_order(model))
        found = {}
        for (name, container), ua in zip(ins, raw):
            if container == "float32" or container in WIDE_CONTAINERS:
                arr = ua.array
                vals = integral_codes(arr, ua.source, "inputs") if arr.dtype.kind == "f" else arr
                found[name] = infer_code_dtype(vals)
        return found
    except (TilewiseError, ValueError, TypeError, OSError):
        return {}


def read_user_data(model: str | Path, data: str | Path | None, *, expected: str | Path | None = None,
                   golden: str | Path | None = None, activations: str | Path | None = None,
                   layout: str = "auto",
                   input_dtypes: Mapping[str, str] | None = None) -> UserData:
    """Read the model and the user's data against it (module docstring)."""
    try:
        graph, lg = _load(model, input_dtypes)
    except TilewiseError:
        # refused with the default code types: with the data's own, if it says them
        found = {} if input_dtypes else _dtypes_from_data(model, data, golden)
        if not found:
            raise
        graph, lg = _load(model, found)
    ispecs, ospecs = input_specs(graph, lg), output_specs(graph, lg)
    notes: list[str] = []
    folder = None
    if golden is not None:
        folder = read_dory_folder(golden)
        if len(ispecs) != 1:
            raise TilewiseError(f"--golden {golden}: DORY's golden folder holds one input "
                                f"(input.txt) and the model has {len(ispecs)}; give its data as "
                                f"--data inputs.npz")
        raw = [_golden_input(folder, ispecs[0])]
        check_counts((*folder.layers, *((folder.output,) if folder.output else ())), graph,
                     "golden data")
    else:
        order = onnx_input_order(model) if graph.meta.get("format") == "onnx" else None
        raw, notes = read_arrays(data, "inputs", ispecs, order)
    if not input_dtypes:
        found, note = infer_input_dtypes(graph, ispecs, raw)
        if any(sp.dtype != found.get(sp.names[0], sp.dtype) for sp in ispecs):
            graph, lg = _load(model, found)
            ispecs, ospecs = input_specs(graph, lg), output_specs(graph, lg)
        if note:
            notes.append(note)
    xs, descs = [], []
    for ua, spec in zip(raw, ispecs):
        x, desc = to_ir(ua, spec, "inputs", layout)
        if xs:
            check_count(len(xs[0]), descs[0]["file"], len(x), desc["file"], "inputs")
        xs.append(x)
        descs.append(desc)
    n = len(xs[0])
    inputs = [sample([x[i] for x in xs]) for i in range(n)]
    if folder is not None:
        descs[0]["values"] = f"DORY's integer codes, {ispecs[0].dtype}"
    data_desc = {**descs[0], **({"arrays": descs} if len(descs) > 1 else {})}
    out = UserData(graph, lg, ispecs, ospecs, inputs, data_desc, notes=notes)
    raw_exp: list[UserArray] | None = None
    if folder is not None:
        out.golden = list(folder.layers)
        cut = graph.meta.get("onnx_cut")
        if folder.output is not None and cut:   # the model's output, after the float tail
            out.notes.append(f"{folder.output.file}: the model's output after its float tail, "
                             f"which the network does not compile (it ends at "
                             f"{', '.join(repr(o) for o in cut.get('outputs', ()))}): not compared")
        elif folder.output is not None and len(ospecs) == 1:
            raw_exp = [_golden_output(folder, ospecs[0])]
    elif expected is not None:
        raw_exp, more = read_arrays(expected, "expected outputs", ospecs)
        out.notes += more
    if raw_exp is not None:
        out.expected, out.expected_desc = [], []
        for ua, spec in zip(raw_exp, ospecs):
            e, desc = to_ir(ua, spec, "expected outputs", layout, keep_float=True)
            check_count(n, data_desc["file"], len(e), desc["file"], "expected outputs")
            out.expected.append(e)
            out.expected_desc.append(desc)
    acts = Path(activations) if activations is not None else None
    if acts is None and data is not None and Path(data).suffix.lower() == ".npz":
        beside = Path(data).with_name("activations.npz")
        acts = beside if beside.is_file() and beside != Path(data) else None
    if acts is not None:
        out.golden = read_activations(acts)
        if n > 1:
            out.notes.append(f"{acts}: per-layer golden tensors compared on the first of the {n} "
                             f"inputs")
    return out


__all__ = ["UserData", "infer_input_dtypes", "read_user_data"]
