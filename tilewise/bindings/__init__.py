"""Bindings: one folder per kernel family (legality, cost terms, scratch, constants, C templates).

`base.py` defines the data (`Binding`, `BindingKey`, `Precision`, `TileRules`, `ConstLayout`,
`Family`); `keys.py` reads a layer's key; each family folder (`portable/` today) builds its
bindings for a module's cost model. Targets attach bindings to their modules; partition chooses
one per layer (tilewise/partition).
"""

from .base import Binding, BindingKey, ConstLayout, Family, LayerConstants, Precision, TileRules, no_scratch
from .keys import layer_key, layer_precision, matches

__all__ = ["Binding", "BindingKey", "ConstLayout", "Family", "LayerConstants", "Precision",
           "TileRules", "layer_key", "layer_precision", "matches", "no_scratch"]
