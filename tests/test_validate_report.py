"""The validation report's typed mismatches (validate/report.py) and the one comparison both runners
share (validate/compare.py): each mismatch's JSON is the dict the report has always written; the
host build and a firmware run (fill_report on TW_* lines, no simulator) turn the same wrong output
and the same wrong DMA byte count into the same typed mismatches, in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.codegen import generate
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.ir.packing import tensor_bytes
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import check_project, golden_outputs, make_inputs, new_report
from tilewise.validate.firmware_run import fill_report, parse_run
from tilewise.validate.report import (
    CounterMismatch,
    GoldenLayerMismatch,
    HalMismatch,
    OutputMismatch,
    ReferenceDisagreement,
    RunFailure,
)
from tilewise.validate.text import format_report

from .codegen_cases import c_cache  # noqa: F401 (fixture)


def test_each_mismatch_writes_the_json_the_report_always_had():
    assert OutputMismatch("golden", 3, 7).to_json() == {
        "kind": "output", "against": "golden", "input": 3, "elements": 7}
    assert OutputMismatch("expected", 2, 1, "a").to_json() == {
        "kind": "output", "against": "expected", "input": 2, "elements": 1, "output": "a"}
    assert list(CounterMismatch("dma_bytes", 10, 12, 10, 11).to_json().items()) == [
        ("kind", "dma_bytes"), ("measured_min", 10), ("measured_max", 11), ("predicted", 12)]
    assert list(CounterMismatch("l3_transfers", 4, 5).to_json().items()) == [
        ("kind", "l3_transfers"), ("measured", 4), ("predicted", 5)]
    assert HalMismatch(1, 0, 2, 3).to_json() == {
        "kind": "hal", "races": 1, "bad_waits": 0, "pending": 2, "max_pending": 3}
    assert RunFailure("network_host exited with code 3").to_json() == {
        "kind": "run", "error": "network_host exited with code 3"}
    assert list(RunFailure("TW_TRAP x", 1).to_json()) == ["kind", "status", "error"]
    assert ReferenceDisagreement(5).to_json() == {"kind": "golden_vs_reference", "elements": 5}
    assert GoldenLayerMismatch("a.npz", "relu1", "t3", 2).to_json() == {
        "kind": "golden_layer", "file": "a.npz", "name": "relu1", "ir": "t3", "elements": 2}
    with pytest.raises(ValueError, match="counter kind 'dma'"):   # the firmware's old single kind
        CounterMismatch("dma", (1, 2, 3), (1, 2, 3))


def _dma_lines(n: int, per_inference: list[tuple[int, int, int]]) -> str:
    return "".join(f"TW_DMA {i} {b} {t} {c}\n" for i, (b, t, c) in zip(range(n), per_inference))


def test_host_and_firmware_give_the_same_typed_mismatches(tmp_path, c_cache):
    """One project, one wrong golden element of input 1 and a DMA byte prediction off by 8: the
    host build's check_project and fill_report on the TW_* lines a firmware would print for the
    same run (its outputs, its per-inference DMA counters) report the same mismatches."""
    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("gap8", l1_kb=8), "model")
    lg = ns.layers
    p = generate(ns, tmp_path / "p")
    xs = make_inputs(lg, 1)
    right = golden_outputs(lg, xs)
    wrong = [np.array(g, copy=True) for g in right]
    wrong[1].reshape(-1)[0] += 1

    host = new_report(ns, p, "example (host)", len(xs), None)
    host.dma_bytes_predicted += 8
    check_project(host, p, lg, xs, wrong, cache=c_cache, locate=False)
    b, t, c = host.dma_bytes_measured, host.dma_transfers_measured, host.dma_chunks_measured
    assert b is not None and b + 8 == host.dma_bytes_predicted

    (out,) = lg.outputs
    text = "".join(f"TW_OUT {i} {tensor_bytes(np.asarray(g), lg.tensors[out].dtype).hex()}\n"
                   for i, g in enumerate(right))
    fw = new_report(ns, p, "example (firmware)", len(xs), None)
    fw.dma_bytes_predicted += 8
    fill_report(fw, ns, parse_run(0, text + _dma_lines(len(xs), [(b, t, c)] * len(xs)) + "TW_DONE\n"),
                xs, wrong)

    want = [CounterMismatch("dma_bytes", b, b + 8, b, b), OutputMismatch("golden", 1, 1)]
    assert host.mismatches == want, host.mismatches
    assert fw.mismatches == want, fw.mismatches
    assert [m.to_json() for m in fw.mismatches] == host.to_json()["mismatches"]
    assert (fw.dma_bytes_measured, fw.dma_transfers_measured, fw.dma_chunks_measured) == (b, t, c)
    line = f"  mismatch:    dma_bytes: measured_min {b}, measured_max {b}, predicted {b + 8}"
    assert line in format_report(host).splitlines() and line in format_report(fw).splitlines()

    # a firmware whose inferences move different bytes: the smallest and largest, and the
    # transfers and chunks held as the host holds them (summed over the run)
    fw = new_report(ns, p, "example (firmware)", len(xs), None)
    lines = _dma_lines(len(xs), [(b, t, c), (b + 4, t + 1, c)] + [(b, t, c)] * (len(xs) - 2))
    fill_report(fw, ns, parse_run(0, text + lines + "TW_DONE\n"), xs, right)
    assert fw.mismatches == [CounterMismatch("dma_bytes", b, b, b, b + 4),
                             CounterMismatch("dma_transfers", t, t)], fw.mismatches
