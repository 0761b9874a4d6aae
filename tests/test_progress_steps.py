"""Issue 25 item 10: the long steps (C builds, QEMU / GVSoC / count runs) say what they do.

On a terminal a spinner or bar with the elapsed time (progress.py, rich); off a terminal the
step's name and its time on stderr once it ends (steps of progress.NOTE_AFTER_S or more; 0 here so
that every step shows), silenced by --quiet and --json; an absurd --inputs is refused in one
sentence instead of running silently for days.
"""

from __future__ import annotations

import io
import re
import shutil
import time
from pathlib import Path

import pytest

from tilewise import progress
from tilewise.cli import main

from .conftest import absent

EXAMPLE = str(Path(__file__).resolve().parent.parent / "tilewise" / "examples" / "example_cnn.onnx")
TIMED = re.compile(r"^tilewise: (.+): \d+\.\d s$")


def _timed_steps(err: str) -> list[str]:
    return [m.group(1) for m in map(TIMED.match, err.splitlines()) if m]


@pytest.fixture
def every_step(monkeypatch):
    monkeypatch.setattr(progress, "NOTE_AFTER_S", 0.0)


def test_off_a_terminal_each_long_step_is_named_with_its_time(every_step, tmp_path, capsys):
    assert main(["validate", EXAMPLE, "--target", "gap8", "--inputs", "2"]) == 0
    steps = _timed_steps(capsys.readouterr().err)
    assert "building" in steps and "scheduling layers" in steps, steps


def test_firmware_build_and_counting_run_are_named(every_step, capsys):
    if shutil.which("arm-none-eabi-gcc") is None:
        absent("arm-none-eabi-gcc is not installed (`make test` installs it)")
    assert main(["validate", EXAMPLE, "--target", "stm32h7", "--on", "count", "--inputs", "1"]) == 0
    steps = _timed_steps(capsys.readouterr().err)
    assert "building the firmware" in steps, steps
    assert any("counting instructions" in s for s in steps), steps


@pytest.mark.parametrize("flag", [["--quiet"], ["--json"]])
def test_quiet_and_json_silence_the_step_lines(every_step, flag, capsys):
    assert main(["validate", EXAMPLE, "--target", "gap8", "--inputs", "2", *flag]) == 0
    assert _timed_steps(capsys.readouterr().err) == []


def test_short_steps_are_not_named(monkeypatch, capsys):
    """The default threshold: a step of a moment writes nothing (only long ones are worth a line)."""
    monkeypatch.setattr(progress, "_quiet", False)
    monkeypatch.setattr(progress, "_cli", True)
    with progress.step("a moment"):
        pass
    with progress.progress(3, "three quick units") as done:
        done(3)
    assert _timed_steps(capsys.readouterr().err) == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_step_draws_a_spinner_on_a_terminal(monkeypatch):
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(progress, "_quiet", False)
    with progress.step("running the firmware on GVSoC"):
        time.sleep(0.3)
    assert "running the firmware on GVSoC" in term.getvalue()
    assert not _timed_steps(term.getvalue())   # a terminal gets the spinner, not the line
    monkeypatch.setattr(progress, "_quiet", True)   # --quiet
    term.seek(0)
    term.truncate()
    with progress.step("running the firmware on GVSoC"):
        time.sleep(0.1)
    assert term.getvalue() == ""


def test_absurd_input_counts_are_refused_at_once():
    """In a process of its own: the unrefused count runs for days, so the test ends it."""
    import os
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    try:
        r = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", EXAMPLE, "--target",
                            "gap8", "--inputs", "1000000000"], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "PYTHONPATH": root})
    except subprocess.TimeoutExpired:
        pytest.fail("validate --inputs 1000000000 runs instead of being refused")
    assert r.returncode == 2, r.stderr
    err = r.stderr
    assert err.startswith("tilewise: error: --inputs 1,000,000,000:") and err.count("\n") == 1, err
    assert "--data" in err
