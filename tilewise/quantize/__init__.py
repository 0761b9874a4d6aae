"""Quantization for the target's arithmetic (issue 15): accumulator bounds of seed 002 §4.4
(`acc_bounds`); calibration and the `quantize` command come later."""
