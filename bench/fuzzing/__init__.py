"""Fuzzing of tilewise's model importers (issue 25): mutations of the shipped models run through
`tilewise analyze` in a worker process under a time and memory limit.

- `mutate_bytes`: format-blind mutations of a file (bit flips, overwrites, truncations, splices);
- `mutate_onnx`: field-level mutations of a parsed ONNX ModelProto (dims, dtypes, attributes,
  edges, initializers, cycles), re-serialized;
- `mutate_tflite`: field-level mutations of a TFLite flatbuffer made in place (tensor shapes,
  buffer and opcode indices, quantization parameters, operator edges, options);
- `mutators`: one entry point per importer that picks among those;
- `worker`: runs a case as the CLI does and classifies it (ok, exit 2, exit 3, hang, crash);
- `seeds`: the shipped models the mutations start from.

bench/fuzz_importers.py is the long run, tests/test_fuzz_importers.py the bounded one.
"""
