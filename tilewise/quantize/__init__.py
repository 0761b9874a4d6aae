"""`tilewise quantize`: a float model to an integer (QDQ ONNX or TFLite) model for a target (issue 15).

The package imports nothing (the CLI builds its parser in cli/quantize.py without loading
onnxruntime); the pipeline is in pipeline.py.

Pipeline (pure functions between stages):
1. read the float ONNX model, or convert a float TFLite one (tflite_in.py), and check its ops
   (graph_out.check_float_model);
2. plan the activation points (graph_out.plan): which tensors get their own int8 parameters;
3. calibrate: run the float model in onnxruntime on the calibration inputs with every point as
   an output and feed one observer per point (calibrate.py: minmax / percentile / mse);
4. write the QDQ model (graph_out.write_qdq): per-channel int8 weights, int32 biases (weights.py);
   with bit widths (pipeline.Widths): int4 / int2 weights and uint4 / uint2 activations as typed
   initializers — `--bits 4|2` uniform (pipeline.uniform_widths, graph_out.sub_byte_points),
   `--bits mixed` per-layer weight bits under a weight budget from measured sensitivity (mixed.py);
   or, for --target gap8 / gap9 / pulp-open / diana, the shift-mode integer model (shift_out.py:
   NEMO-style Conv/Gemm → Cast(int64) → Mul(k) → Div(2^d) → Cast → Clip on 8-bit codes, which
   the frontend reads as shift-mode layers and NE16's norm-quant computes);
   or, with `-o OUT.tflite`, the TFLite model of the plan (tflite_out.py: int8 or 16x8, NHWC,
   written with the flatbuffer builder of tflite_build.py);
5. report SQNR per output and per layer against float on the calibration inputs (sqnr.py; for a
   .tflite output LiteRT runs the written file), and with --compare the output SQNR of an
   existing integer model on the same inputs.

Requantization is the reading runtime's (`onnx` mode: onnxruntime's QLinear kernels, which
tilewise reproduces bit-exactly) for the QDQ model, the targets' `shift` mode for the integer one.

Narrow accumulators (seed 002 §4.4): the three accumulator bounds and the integer-domain proof of
a layer's accumulator range are in golden/acc_bounds.py.
"""
