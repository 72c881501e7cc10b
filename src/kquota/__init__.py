"""kquota: GitOps for Apache Kafka client quotas.

Declare quotas in YAML, review a plan, apply it safely (validate-only first), detect drift.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
