"""The benchmark's workload: the four MLPerf Tiny models and the inputs every engine runs on.

Models are found as the tests find them (tests/conftest.py): $TILEWISE_MODELS or ../shared/models
beside the repository; a missing model is an error here (a benchmark that silently drops a model
is not the benchmark). Inputs: one int8 tensor per model drawn from a fixed seed, the same bytes fed
to the generated C, TFLM and LiteRT.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
MLPERF = ("ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025", "ad_autoencoder")
#: names used in seed 003 Table III for the same networks
PAPER_NAMES = {"vww_mobilenet_v1_025": "MobileNet (VWW)", "ic_resnet8": "ResNet-8",
               "kws_dscnn": "DS-CNN", "ad_autoencoder": "DAE (ToyCar)"}
SEED = 5


def models_dir() -> Path:
    return Path(os.environ.get("TILEWISE_MODELS", REPO.parent / "shared" / "models"))


def model_path(name: str) -> Path:
    path = models_dir() / "mlperf_tiny" / f"{name}.tflite"
    if not path.exists():
        raise FileNotFoundError(f"MLPerf Tiny model not found at {path} (set TILEWISE_MODELS)")
    return path


def model_input(name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The benchmark input of a model: uniform over the dtype's range, seeded by model name."""
    seed = SEED + sum(name.encode())
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    return rng.integers(info.min, int(info.max) + 1, size=tuple(int(d) for d in shape), dtype=dtype)
