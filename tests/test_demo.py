"""`tilewise demo` (the README's `make demo`): analyze, generate, build and validate the bundled
example model; it must print bit-exact reports and exit 0."""

from __future__ import annotations

from tilewise.cli import main as cli_main


def test_demo_prints_a_bit_exact_report(tmp_path, capsys):
    assert cli_main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "tilewise analyze" in out                       # the schedule table
    assert out.count("result:      BIT-EXACT") == 2        # default L1 and 8 kB
    assert "onnxruntime" in out and "MISMATCH" not in out
    assert "measured per inference = " in out
    assert "demo: bit-exact" in out
    for d in ("example_cnn_gap8", "example_cnn_gap8_l1_8k"):
        assert (tmp_path / d / "network_host").exists()
        assert (tmp_path / d / "layers" / "layer_00.c").exists()
