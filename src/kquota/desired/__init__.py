"""Desired state: YAML files -> validated, merged :class:`DesiredState`.

The file format (see ``docs/desired-state.md``)::

    apiVersion: kquota/v1
    kind: ClientQuotas            # or ClientQuotasOverlay: its entries replace base entries
    profiles:                     # optional, shared by all files read
      gold: {producer_byte_rate: 10MiB, consumer_byte_rate: 20MiB}
    quotas:
      - match: {user: alice, client-id: <default>}
        set: {producer_byte_rate: 1048576, request_percentage: 150}
      - match: {user: bob}
        profile: gold
        set: {request_percentage: 200}      # on top of the profile's values
      - match: {user: {name: "<default>"}}  # the user literally named <default>
        set: {consumer_byte_rate: 1MB}
      - match: {ip: 203.0.113.7}
        set: {connection_creation_rate: 10}

``<default>`` in a match is the default entity; ``{name: "..."}`` is always a literal name.
"""

from kquota.desired.loader import load_desired
from kquota.desired.problems import DesiredStateError, Problem, SourceLocation
from kquota.desired.state import DesiredState

__all__ = ["DesiredState", "DesiredStateError", "Problem", "SourceLocation", "load_desired"]
