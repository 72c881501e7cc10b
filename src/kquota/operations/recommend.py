"""The recommend operation (``kquota recommend``, issue 30): quotas sized from observed
demand, as an overlay of desired state for ``kquota plan`` to review. It writes no cluster.

The patch is export's YAML (:func:`kquota.desired.exportable.export_yaml`, read back through
the loader before it is written) of kind ``ClientQuotasOverlay``: each entry replaces the
base entry of its entity whole, so it carries every key the entity has today, the proposed
ones changed. ``kquota plan quotas/ patch.yaml`` is then the review.
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.desired.exportable import export_yaml
from kquota.desired.format import KIND_OVERLAY
from kquota.operations.usage import UsageSource, read_usage
from kquota.plan.resolver import Principal
from kquota.policy import ProtectMatch
from kquota.target import Target
from kquota.usage.recommend import Recommendation, Recommended, RecommendOptions, recommend


def recommend_quotas(
    target: Target,
    source: UsageSource,
    *,
    since_ms: int,
    options: RecommendOptions,
    protect: Sequence[ProtectMatch] = (),
) -> Recommended:
    """recommend_quotas reads usage and proposes quotas (see :mod:`kquota.usage.recommend`);
    protected principals are the cluster policy's and ``protect``."""
    from kquota.operations.capacity import declared_capacity

    report, state = read_usage(target, source, since_ms=since_ms, extra=(options.percentile,))
    policy = target.policy(prune=None, allow_mass_removal=False, protect=protect)

    def protected(p: Principal) -> bool:
        return any(m.matches(p) for m in policy.protect)

    declared = declared_capacity(target)
    by_key = (
        {}
        if declared is None
        else {"producer_byte_rate": declared.ingress, "consumer_byte_rate": declared.egress}
    )
    found = recommend(
        report, state, options, protected=protected, capacity=lambda key: by_key.get(key)
    )
    return as_overlay(found)


def as_overlay(found: Recommendation) -> Recommended:
    """as_overlay is the recommendation with its patch as a ``ClientQuotasOverlay``."""
    report, options = found.report, found.options
    p = report.profiles
    header = (
        f"Recommended by kquota from the usage of cluster {p.cluster} ({report.source}):\n"
        f"p{options.percentile.normalize():f} x {options.headroom:g} headroom. An overlay: "
        "review it with kquota plan QUOTAS/ THIS-FILE."
    )
    exported = export_yaml(found.patch, _comment_safe(header), KIND_OVERLAY)
    left_out = tuple(f"{e}: {why}" for e, why in exported.left_out)
    return Recommended(found, exported.text, left_out)


def _comment_safe(text: str) -> str:
    from kquota.display import safe_text

    return "\n".join(safe_text(line) for line in text.splitlines())
