"""Formatting shared by the renderers: the human units, safe names and numbers of
:mod:`kquota.display` and :func:`kquota.model.display_entity`, re-exported here.
"""

from __future__ import annotations

from kquota.display import display_name, human, number, safe_text, value_with_unit
from kquota.model import display_entity

__all__ = ["display_entity", "display_name", "human", "number", "safe_text", "value_with_unit"]
