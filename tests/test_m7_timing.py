"""The Cortex-M7 cycle estimate (platforms/m7_timing.py, priced by platforms/mca_timing.py) and
`validate --on count`'s report of it.

The estimator against its validation set (Thumb-2 sequences whose Cortex-M7 cycles are published
from silicon) within the error its docstring states; capstone's text turned into what llvm-mca
reads (IT blocks, calls, forward-only cbz); the D-cache model of the flash's reads; the estimate
per layer of an MLPerf Tiny model next to its counted instructions; a missing llvm-mca in one
sentence.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tilewise.errors import TilewiseError
from tilewise.examples import EXAMPLE_ONNX
from tilewise.platforms import m7_timing as m7
from tilewise.platforms import mca_timing as mca

from .conftest import absent, mlperf_path


@pytest.fixture(scope="module", autouse=True)
def mca_present():
    try:
        mca.llvm_mca()
    except TilewiseError as e:
        absent(str(e))


def test_micro_benchmarks_within_stated_error():
    """Each published sequence within the worst error the docstring states, and the set's mean
    within the stated mean."""
    got = mca.run_mca([list(b.lines) for b in m7.MICRO_BENCHMARKS])
    errors = [abs(r.cycles / b.cycles - 1) for b, r in zip(m7.MICRO_BENCHMARKS, got)]
    for b, r, e in zip(m7.MICRO_BENCHMARKS, got, errors):
        assert e <= m7.VALIDATION_ERROR["worst"] + 1e-9, (b.name, r.cycles, b.cycles)
    assert sum(errors) / len(errors) <= m7.VALIDATION_ERROR["mean"] + 1e-9, errors
    # the set discriminates: single issue of everything would miss the dual-issued ones by 2x
    assert any(r.cycles < 0.6 * r.instructions for r in got)


def _thumb(tmp_path, asm: str) -> bytes:
    """Thumb-2 machine code of `asm` (arm-none-eabi-as, objcopy)."""
    if shutil.which("arm-none-eabi-as") is None:
        absent("arm-none-eabi-as not found (Debian's binutils-arm-none-eabi)")
    src, obj, raw = tmp_path / "b.s", tmp_path / "b.o", tmp_path / "b.bin"
    src.write_text(".syntax unified\n.thumb\n.cpu cortex-m7\n" + asm + "\n")
    subprocess.run(["arm-none-eabi-as", "-o", str(obj), str(src)], check=True)
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".text", str(obj), str(raw)],
                   check=True)
    return raw.read_bytes()


def test_block_text_is_what_llvm_mca_reads(tmp_path):
    """An IT block's conditional instructions lose their suffix (the IT becomes a nop), a call is
    priced as the branch it is, a cbz branches forward to a label; llvm-mca accepts the block."""
    code = _thumb(tmp_path, "cmp r0, r1\nite lt\nmovlt r0, r1\naddge r0, r0, #1\n"
                            "cbz r0, 1f\nbl far\n1: bx lr\nfar: nop")
    lines = mca.block_asm(code, 0x1000)
    assert lines[:4] == ["cmp r0, r1", "nop", "mov r0, r1", "add r0, #1"], lines
    assert lines[4:8] == ["cbz r0, 2f", "2:", "b.w 2f", "2:"], lines
    (r,) = mca.run_mca([lines[:9]])
    assert r.instructions == 7 and 3 <= r.cycles <= 12, r


def test_flash_cache_counts_line_fills():
    """Streaming 32 kB (twice the 16 kB D-cache) misses every line both times; 8 kB read twice
    misses once per line."""
    c = mca.FlashCache.empty(m7.TIMING)
    for _ in range(2):
        for a in range(0, 32 * 1024, 4):
            c.read(a, 4)
    assert c.misses == 2 * 1024
    c = mca.FlashCache.empty(m7.TIMING)
    for _ in range(2):
        for a in range(0, 8 * 1024, 4):
            c.read(a, 4)
    assert c.misses == 256
    c.read(8 * 1024 - 2, 4)          # straddles a line boundary into a new line
    assert c.misses == 257


def test_count_reports_estimated_cycles_per_layer(tmp_path):
    """validate --on count on ad_autoencoder: per layer the estimated Cortex-M7 cycles lie within
    0.4x-2x of the counted instructions (a dual-issue core, weights from flash), the layers'
    estimates sum to at most the inference's, and text and JSON label it an estimate."""
    path = mlperf_path("ad_autoencoder")
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(path),
                           "--target", "stm32h7", "--on", "count", "--inputs", "1", "--json",
                           "-o", str(tmp_path / "p")], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["bit_exact"] and r["estimated_cycles_model"].startswith("estimated, Cortex-M7 model")
    for lay in r["layers"]:
        n, c = lay["measured_instructions"], lay["estimated_cycles"]
        assert 0.4 * n < c < 2 * n, lay
    assert sum(lay["estimated_cycles"] for lay in r["layers"]) <= r["estimated_cycles"]
    assert 0.4 * r["measured_instructions"] < r["estimated_cycles"] < 2 * r["measured_instructions"]
    text = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(path), "--target",
                           "stm32h7", "--on", "count", "--inputs", "1", "-o", str(tmp_path / "p"),
                           "--force"], capture_output=True, text=True, timeout=900).stdout
    assert f"estimated cycles (Cortex-M7 model): {r['estimated_cycles']:,} per inference" in text
    assert text.count("est. M7 cycles") == len(r["layers"]), text


def test_missing_llvm_mca_is_one_sentence(tmp_path):
    """Without llvm-mca, --on count stops with one sentence naming Debian's llvm (exit 2)."""
    env = {**os.environ, "TILEWISE_LLVM_MCA": "llvm-mca-not-installed"}
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(EXAMPLE_ONNX),
                           "--target", "stm32h7", "--on", "count", "--inputs", "1",
                           "-o", str(tmp_path / "p")], capture_output=True, text=True, timeout=900,
                          env=env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Debian's llvm" in proc.stderr, proc.stderr
