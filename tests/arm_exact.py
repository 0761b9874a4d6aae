"""Bit-exactness and prediction checks of an Arm target's network schedule, shared by the widened
kernels' tests
(tests/test_arm_dense_widened.py, tests/test_arm_conv_widened.py)."""

from __future__ import annotations

from pathlib import Path

from tilewise.errors import TilewiseError
from tilewise.platforms import mca_timing
from tilewise.platforms.qemu import qemu
from tilewise.validate import make_inputs, validate_network

from .conftest import absent


def host_and_count(ns, lg, tmp_path: Path) -> None:
    """Two random inputs on the host build (the kernels' plain C), the first on the counter."""
    inputs = make_inputs(lg, 2, 0)
    host, _ = validate_network(ns, tmp_path / "h", inputs)
    assert host.to_json()["bit_exact"]
    r, _ = validate_network(ns, tmp_path / "c", inputs[:1], on="count")
    assert r.to_json()["bit_exact"], r.to_json()["mismatches"][:2]


def on_qemu(ns, lg, tmp_path: Path) -> None:
    """Two random inputs under QEMU (skipped without it)."""
    try:
        qemu()
    except TilewiseError as e:
        absent(str(e))
    r, _ = validate_network(ns, tmp_path / "q", make_inputs(lg, 2, 0), on="qemu")
    assert r.to_json()["bit_exact"] and r.to_json()["platform"] == "qemu"


def prediction_within(ns, lg, i: int, tmp_path: Path, band: float) -> None:
    """Layer i's counted instructions and estimated cycles within `band` of the cost models'
    predictions (skipped without llvm-mca), its outputs bit-exact."""
    try:
        mca_timing.llvm_mca()
    except TilewiseError as e:
        absent(str(e))
    r, _ = validate_network(ns, tmp_path / "c", make_inputs(lg, 1, 0), on="count")
    j = r.to_json()
    assert j["bit_exact"]
    lc = j["layers"][i]
    assert abs(lc["measured_instructions"] / lc["predicted_instructions"] - 1) <= band, lc
    assert abs(lc["estimated_cycles"] / lc["predicted_cycles"] - 1) <= band, lc
