"""User-facing errors: one clear sentence naming the file, node, op or layer, and what to do.

The CLI catches `TilewiseError` and prints its message with exit code 2 (bad input); any other
exception is a bug in tilewise.
"""


class TilewiseError(Exception):
    """Bad input or an impossible request; the message is shown to the user verbatim."""


class UnsupportedOpError(TilewiseError):
    """The model uses an operator (or an operator variant) tilewise does not implement."""


class ModelFormatError(TilewiseError):
    """The model file is missing, truncated, corrupt or of an unknown format."""


class GraphError(TilewiseError):
    """The graph is inconsistent (shapes, dtypes, quantization, dangling tensors)."""
