"""The imperative alteration (``kquota alter``): one entity, through the one writer package."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kquota.kafka.admin import AlterResult, QuotaAlteration, WireAdmin


def alter_one(admin: WireAdmin, alteration: QuotaAlteration, *, validate_only: bool) -> AlterResult:
    """alter_one sends one alteration (or asks the broker to validate it) and returns the
    broker's answer for it; :meth:`AlterResult.raise_for_error` turns a refusal into an error."""
    (result,) = admin.alter([alteration], validate_only=validate_only)
    return result
