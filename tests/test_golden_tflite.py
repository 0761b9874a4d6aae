"""The golden model in TFLite mode is bit-exact with LiteRT's reference kernels (BUILTIN_REF) on the
four MLPerf Tiny models: final outputs on 50 random inputs plus the all-min and all-max inputs, and
every intermediate tensor of ic_resnet8 and kws_dscnn (matched to LiteRT's tensors by TFLite name)."""

from __future__ import annotations

import pytest

try:  # tests/ as a package or as a plain directory on sys.path
    from .conftest import MLPERF, mlperf_path
    from .tflite_builder import compare_with_litert
except ImportError:
    from conftest import MLPERF, mlperf_path
    from tflite_builder import compare_with_litert

from tilewise.frontend import load_model


@pytest.mark.parametrize("name", MLPERF)
def test_mlperf_outputs_bit_exact(name: str) -> None:
    bad, total = compare_with_litert(mlperf_path(name), n=50, seed=11)
    assert total > 0
    assert bad == 0, f"{name}: {bad} of {total} output elements differ from LiteRT BUILTIN_REF"


@pytest.mark.parametrize("name", ["ic_resnet8", "kws_dscnn"])
def test_mlperf_every_intermediate_bit_exact(name: str) -> None:
    graph = load_model(mlperf_path(name))
    index = graph.meta["tflite_tensor_index"]
    assert all(o in index for n in graph.nodes for o in n.outputs), "every IR value must have a TFLite twin"
    bad, total = compare_with_litert(mlperf_path(name), n=8, seed=5, all_tensors=True)
    assert total > 0
    assert bad == 0, f"{name}: {bad} of {total} intermediate elements differ from LiteRT BUILTIN_REF"
