"""Shared fixtures: where the MLPerf Tiny models are, and whether their absence fails or skips.

Models are found at $TILEWISE_MODELS or ../shared/models beside the repository. With
TILEWISE_REQUIRE_MODELS=1 (as in .ci/run) a missing model is a test failure, never a skip.
Every host build of the run (validate through the CLI and the API alike) shares one object cache
of the shipped kernels ($TILEWISE_CC_CACHE, validate/build.py), set for the session here, and
under PYTHONDONTWRITEBYTECODE every Python process of the run one bytecode folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MLPERF = ("ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025", "ad_autoencoder")


def models_dir() -> Path:
    return Path(os.environ.get("TILEWISE_MODELS", REPO.parent / "shared" / "models"))


def absent(msg: str) -> None:
    """Something a test needs is missing (a model, a simulator, a cross compiler): a failure with
    TILEWISE_REQUIRE_MODELS=1 (CI, where `make test` installs or finds all of it), a skip
    elsewhere."""
    if os.environ.get("TILEWISE_REQUIRE_MODELS") == "1":
        pytest.fail(msg)
    pytest.skip(msg)


#: a long step's time note on a non-terminal stderr (tilewise/progress.py `_timed`): not an error
_STEP_NOTE = re.compile(r"^tilewise: [^:]+: \d+\.\d s$")


def error_lines(stderr: str) -> list[str]:
    """The lines of `stderr` that are not progress.py's step-time notes ("tilewise: scheduling
    layers: 10.6 s", written when a step took NOTE_AFTER_S or more — on a loaded machine any step
    may): what a one-sentence error check counts."""
    return [line for line in stderr.strip().splitlines() if not _STEP_NOTE.match(line.strip())]


def mlperf_path(name: str) -> Path:
    """Path of an MLPerf Tiny model; fails (CI) or skips (elsewhere) when it is absent."""
    path = models_dir() / "mlperf_tiny" / f"{name}.tflite"
    if not path.exists():
        absent(f"MLPerf Tiny model not found at {path} (set TILEWISE_MODELS)")
    return path


def pytest_configure(config) -> None:
    """One kernel object cache for the whole run (xdist workers and CLI subprocesses inherit it;
    objects are keyed by content and flags and written atomically). Under PYTHONDONTWRITEBYTECODE
    (CI's environment) one bytecode folder for the run too (PYTHONPYCACHEPREFIX, written
    atomically by the interpreter): every `python -m tilewise.cli` subprocess and xdist worker
    otherwise compiled each tilewise module it imports from source again."""
    import tempfile

    if "TILEWISE_CC_CACHE" not in os.environ:
        os.environ["TILEWISE_CC_CACHE"] = tempfile.mkdtemp(prefix="tilewise_cc_cache_")
        config._tilewise_cc_cache = os.environ["TILEWISE_CC_CACHE"]
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and "PYTHONPYCACHEPREFIX" not in os.environ:
        os.environ.pop("PYTHONDONTWRITEBYTECODE")
        os.environ["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="tilewise_pyc_")
        config._tilewise_pyc = os.environ["PYTHONPYCACHEPREFIX"]


def pytest_unconfigure(config) -> None:
    import shutil

    for attr, var in (("_tilewise_cc_cache", "TILEWISE_CC_CACHE"), ("_tilewise_pyc", "PYTHONPYCACHEPREFIX")):
        made = getattr(config, attr, None)
        if made:
            shutil.rmtree(made, ignore_errors=True)
            os.environ.pop(var, None)


@pytest.fixture(autouse=True)
def _no_terminal_size_from_the_environment(monkeypatch) -> None:
    """Tables take COLUMNS / LINES when set (report/tables.py); pytest-xdist's workers run with
    COLUMNS=80, which would fold every table a test reads. Tests that want a width set it."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(params=MLPERF)
def mlperf_model(request) -> Path:
    return mlperf_path(request.param)


def pytest_collection_modifyitems(config, items):
    """A test module may drop cases that do not apply to it (`not_generated(item)`): deselected,
    and counted as such, rather than skipped."""
    keep, drop = [], []
    for item in items:
        pred = getattr(item.module, "not_generated", None) if hasattr(item, "module") else None
        (drop if pred is not None and pred(item) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def digits_trained():
    """(data, float ONNX model, numpy net) of the digits CNN (bench/digits.py: sklearn's
    digits, numpy-trained, seeded): trained once per test process for every module that uses it."""
    from bench import digits

    data = digits.load()
    net = digits.train(data)
    return data, digits.to_onnx(net), net
