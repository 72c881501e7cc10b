"""Project config ``kquota.yaml``: clusters, how to reach them, what they own, how safely.

Example::

    clusters:
      prod:
        kafka:                               # Kafka client properties, str -> str
          bootstrap.servers: broker-1:9093,broker-2:9093
          security.protocol: SASL_SSL
          sasl.mechanism: SCRAM-SHA-512
          sasl.username: kquota
          sasl.password: ${KQUOTA_PROD_PASSWORD}
        desired: [quotas/base, quotas/prod]  # relative to this file
        audit_topic: kquota-audit            # optional
        audit_signing:                       # optional: sign and verify audit events
          key_id: k2                         # the key that signs new events
          keys: {k1: ${KQUOTA_AUDIT_K1}, k2: ${KQUOTA_AUDIT_K2}}   # each from ${VAR}
        policy:
          scope: [{user: "team-*"}, {ip: "*"}]   # or: all (the default)
          prune: false                       # the default
          max_removals: 10                   # the default
          max_removal_fraction: 0.3          # the default
          protect: [{user: "svc-*"}]         # principals a plan may not throttle harder
          capacity: {max_oversubscription: 3.0}   # optional: stop plans past this ratio
          usage: {max_throttled_fraction: 0.05}   # optional: stop plans throttling past this
          mode: manage                       # the default; observe: apply refuses
          observe: [{user: "legacy-*"}]      # scopes apply may not alter (observe mode)
          ramp: {max_step: 0.5}              # optional: apply --ramp lowers in steps
        capacity:                            # optional, per broker (docs/capacity.md)
          ingress: 100MiB/s
          egress: 200MiB/s
          disk_write: 150MiB/s               # optional
        quota_window: {num: 11, size_seconds: 1}  # optional: the brokers' quota window
        platform: strimzi                    # optional: who else writes quotas here
        strimzi_quotas_type: kafka           # the Kafka resource's spec.kafka.quotas.type
        kafka_users: [svc-orders]            # optional: users Strimzi's User Operator owns
    rollout:                                 # optional: the waves of kquota fleet apply
      - {clusters: [canary-eu]}
      - {clusters: ["eu-*"], max_parallel: 2, soak: 10m}
      - {clusters: ["*"], max_parallel: 4}

Decisions:

- Unknown fields are errors everywhere (a typo in ``prune`` must not silently mean "off").
- ``${VAR}`` in a property value is read from the environment when the properties are asked
  for (:meth:`ClusterConfig.client_properties`), not at load: a config with several clusters
  must be usable in a job that only has one cluster's secrets. A missing variable is an error
  naming it and the file:line. ``$${`` writes a literal ``${``.
- Secrets never print: ``repr`` shows property values as ``'***'`` for every key containing
  password, secret, token or key (``ssl.key.password``, ``sasl.oauthbearer.token...``).
- Every error carries file:line:column, from PyYAML's node marks, in the desired state's
  wording (:mod:`kquota.config.problems`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from kquota.config.file import CONFIG_FILENAME as CONFIG_FILENAME  # re-exported
from kquota.config.file import find_config as find_config  # re-exported
from kquota.config.problems import Marks
from kquota.errors import KquotaError
from kquota.localfile import MiB, UnreadableFile, read_text
from kquota.model import ENTITY_TYPES
from kquota.policy import (
    DEFAULT_MAX_REMOVAL_FRACTION,
    DEFAULT_MAX_REMOVALS,
    Policy,
    ProtectMatch,
    ScopeMatch,
)
from kquota.secrets import Provenance, mask

MAX_CONFIG_BYTES = MiB
"""The largest kquota.yaml read: a config, not data."""

if TYPE_CHECKING:
    from kquota.audit_keys import AuditKeys
    from kquota.desired.nodes import Node

_ENV_REF = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_WHOLE_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(KquotaError):
    """ConfigError: kquota.yaml is unreadable or invalid; the message has file:line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_matches(v: list[dict[str, str]]) -> None:
    for match in v:
        if not match:
            raise ValueError("a scope match needs at least one entity type")
        unknown = set(match) - set(ENTITY_TYPES)
        if unknown:
            raise ValueError(
                f"unknown entity type(s) {sorted(unknown)} in scope; "
                f"allowed: {', '.join(ENTITY_TYPES)}"
            )


class CapacityPolicyConfig(_Strict):
    """CapacityPolicyConfig is ``policy.capacity``: when oversubscription stops a plan."""

    max_oversubscription: float = Field(gt=0.0, le=1e9)


class UsagePolicyConfig(_Strict):
    """UsagePolicyConfig is ``policy.usage``: when the throttle replay stops a plan."""

    max_throttled_fraction: float = Field(ge=0.0, le=1.0)


class QuotaWindowConfig(_Strict):
    """QuotaWindowConfig is the brokers' ``quota.window.num`` and
    ``quota.window.size.seconds``, for the throttle replay where the brokers cannot be asked."""

    num: int = Field(ge=1, le=10_000)
    size_seconds: int = Field(ge=1, le=86_400)


def _byte_rate(v: Any) -> Any:
    # 100MiB/s, 100MiB or a whole number of bytes per second: the desired state's units.
    if isinstance(v, str):
        from kquota.units import UnitError, parse_byte_size

        try:
            return float(parse_byte_size(v.strip()))
        except UnitError as e:
            raise ValueError(
                f"{e}; allowed: bytes per second, e.g. 125000000 or 100MiB/s"
            ) from None
    return v


class CapacityConfig(_Strict):
    """CapacityConfig is one broker's capacity in bytes per second (docs/capacity.md)."""

    ingress: float | None = Field(default=None, gt=0.0)
    egress: float | None = Field(default=None, gt=0.0)
    disk_write: float | None = Field(default=None, gt=0.0)

    _rates = field_validator("ingress", "egress", "disk_write", mode="before")(_byte_rate)


class RampConfig(_Strict):
    """RampConfig is how gently a quota is lowered by ``apply --ramp``."""

    max_step: float = Field(gt=0.0, lt=1.0)
    """Each step lowers a quota to at least this share of its value before the step."""


class PolicyConfig(_Strict):
    """PolicyConfig is a cluster's ownership and safety policy as written in the file."""

    scope: Literal["all"] | list[dict[str, str]] = "all"
    prune: bool = False
    max_removals: int = Field(default=DEFAULT_MAX_REMOVALS, ge=0)
    max_removal_fraction: float = Field(default=DEFAULT_MAX_REMOVAL_FRACTION, ge=0.0, le=1.0)
    protect: list[dict[str, str]] = Field(default_factory=list)
    capacity: CapacityPolicyConfig | None = None
    usage: UsagePolicyConfig | None = None
    mode: Literal["manage", "observe"] = "manage"
    observe: list[dict[str, str]] = Field(default_factory=list)
    """ownership scopes in observe mode (matches as in ``scope``): apply refuses to alter them"""
    ramp: RampConfig | None = None

    @field_validator("protect")
    @classmethod
    def _check_protect(cls, v: list[dict[str, str]]) -> list[dict[str, str]]:
        for match in v:
            ProtectMatch.of(match)  # ValueError: what is wrong and what is allowed
        return v

    @field_validator("observe")
    @classmethod
    def _check_observe(cls, v: list[dict[str, str]]) -> list[dict[str, str]]:
        _check_matches(v)
        return v

    @field_validator("scope")
    @classmethod
    def _check_scope(cls, v: Literal["all"] | list[dict[str, str]]) -> Any:
        if v == "all":
            return v
        if not v:
            raise ValueError("scope needs at least one match (or say: all)")
        _check_matches(v)
        return v

    def to_policy(self, *, prune: bool | None = None, allow_mass_removal: bool = False) -> Policy:
        """to_policy builds the planner's Policy; ``prune`` overrides the file when given."""
        scope = None if self.scope == "all" else tuple(ScopeMatch.of(m) for m in self.scope)
        return Policy(
            scope=scope,
            prune=self.prune if prune is None else prune,
            max_removals=self.max_removals,
            max_removal_fraction=self.max_removal_fraction,
            allow_mass_removal=allow_mass_removal,
            protect=tuple(ProtectMatch.of(m) for m in self.protect),
            max_oversubscription=(
                None if self.capacity is None else self.capacity.max_oversubscription
            ),
            max_throttled_fraction=(
                None if self.usage is None else self.usage.max_throttled_fraction
            ),
            observe=self.mode == "observe",
            observed=tuple(ScopeMatch.of(m) for m in self.observe),
        )


class AuditSigningConfig(_Strict):
    """AuditSigningConfig is ``audit_signing``: the keys audit events are signed and verified
    with (docs/rollout.md), each one a ``${VAR}`` so no key is ever written in the file."""

    key_id: str
    keys: dict[str, str] = Field(min_length=1, repr=False)

    @field_validator("keys")
    @classmethod
    def _check_keys(cls, v: dict[str, str]) -> dict[str, str]:
        from kquota.audit_keys import KEY_ID

        for key_id, raw in v.items():
            if not KEY_ID.fullmatch(key_id):
                raise ValueError(
                    f"key id {key_id!r}: allowed are 1 to 64 ASCII letters, digits, '.', '_', '-'"
                )
            if not _WHOLE_ENV_REF.fullmatch(raw):
                raise ValueError(
                    f"key {key_id!r}: give the key as ${{VAR}}, read from the environment; a key "
                    "written in kquota.yaml is a key anyone with the file has"
                )
        return v

    @field_validator("key_id")
    @classmethod
    def _check_key_id(cls, v: str) -> str:
        from kquota.audit_keys import KEY_ID

        if not KEY_ID.fullmatch(v):
            raise ValueError("allowed are 1 to 64 ASCII letters, digits, '.', '_', '-'")
        return v

    @model_validator(mode="after")
    def _signing_key_is_one_of_them(self) -> AuditSigningConfig:
        if self.key_id not in self.keys:
            known = ", ".join(sorted(self.keys))
            raise ValueError(f"key_id {self.key_id!r} is not one of its keys ({known})")
        return self

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        yield "key_id", self.key_id
        yield "keys", dict.fromkeys(self.keys, "***")


class ClusterConfig(_Strict):
    """ClusterConfig is one cluster: client properties, desired-state folders, policy."""

    kafka: dict[str, str] = Field(repr=False)
    desired: list[str] = Field(default_factory=lambda: ["quotas"])
    audit_topic: str | None = None
    audit_signing: AuditSigningConfig | None = None
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    capacity: CapacityConfig | None = None
    quota_window: QuotaWindowConfig | None = None
    """the brokers' quota window as declared (the replay asks the brokers first)"""
    platform: Literal["kafka", "strimzi"] | None = None
    strimzi_quotas_type: Literal["kafka", "strimzi"] | None = None
    """the ``Kafka`` resource's ``spec.kafka.quotas.type`` (``kafka``: the Cluster Operator
    writes ``{user=<default>}`` from it rather than removing it)"""
    kafka_users: list[str] = Field(default_factory=list)
    """users whose quotas Strimzi's User Operator owns (``KafkaUser`` resources)"""

    _base_dir: Path = PrivateAttr(default=Path("."))
    _source: str = PrivateAttr(default="<config>")
    _lines: dict[str, int] = PrivateAttr(default_factory=dict)

    @field_validator("kafka", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        # Kafka properties are strings; YAML may read `30000` or `true` as numbers/booleans.
        if isinstance(v, dict):
            out = {}
            for k, val in v.items():
                if isinstance(val, bool):
                    val = "true" if val else "false"
                elif isinstance(val, int | float):
                    val = str(val)
                out[k] = val
            return out
        return v

    @field_validator("kafka")
    @classmethod
    def _needs_bootstrap(cls, v: dict[str, str]) -> dict[str, str]:
        if "bootstrap.servers" not in v:
            raise ValueError("kafka properties need bootstrap.servers")
        return v

    @field_validator("desired")
    @classmethod
    def _nonempty(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("desired needs at least one path")
        return v

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        yield "kafka", mask(self.kafka)
        yield from super().__repr_args__()

    def desired_paths(self) -> list[Path]:
        """desired_paths are the desired-state folders, resolved against the config's folder."""
        return [self._base_dir / p for p in self.desired]

    def client_properties(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """client_properties returns the Kafka properties with ``${VAR}`` interpolated.

        Raises ConfigError naming the variable (never its value) and the line it is used on.
        """
        environ = os.environ if env is None else env
        out: dict[str, str] = {}
        for key, raw in self.kafka.items():

            def substitute(m: re.Match[str], key: str = key) -> str:
                if m.group(0) == "$${":
                    return "${"
                name = m.group(1)
                if name not in environ:
                    line = self._lines.get(key)
                    where = f"{self._source}:{line}" if line else self._source
                    raise ConfigError(
                        f"{where}: environment variable {name} is not set (used by {key})"
                    )
                return environ[name]

            out[key] = _ENV_REF.sub(substitute, raw)
        return out

    def audit_keys(self, env: Mapping[str, str] | None = None) -> AuditKeys | None:
        """audit_keys are ``audit_signing``'s keys read from the environment (None: none
        configured). ConfigError names the variable or key id, never a key's value."""
        from kquota.audit_keys import AuditKeys, key_problem

        signing = self.audit_signing
        if signing is None:
            return None
        environ = os.environ if env is None else env
        keys: dict[str, bytes] = {}
        for key_id, raw in signing.keys.items():
            match = _WHOLE_ENV_REF.fullmatch(raw)
            assert match is not None  # the validator saw to it
            name = match.group(1)
            if name not in environ:
                raise ConfigError(
                    f"{self._source}: environment variable {name} is not set (audit signing "
                    f"key {key_id!r})"
                )
            problem = key_problem(key_id, environ[name])
            if problem is not None:
                raise ConfigError(f"{self._source}: {problem} (from ${{{name}}})")
            keys[key_id] = environ[name].encode()
        return AuditKeys(signing.key_id, keys)

    def provenance(self) -> Provenance:
        """provenance says where each property stands (``kquota.yaml:line``) and which
        ``${VAR}`` names each value expands: messages name those, never the values."""
        where = {
            key: f"{self._source}:{self._lines[key]}" if key in self._lines else self._source
            for key in self.kafka
        }
        variables = {
            key: names
            for key, raw in self.kafka.items()
            if (names := tuple(m.group(1) for m in _ENV_REF.finditer(raw) if m.group(1)))
        }
        return Provenance(where, variables)


class WaveConfig(_Strict):
    """WaveConfig is one wave of ``kquota fleet apply``: the clusters it takes (names or
    globs; a cluster goes in the first wave that matches it), how many at once, and how
    long drift must stay clean after it before the next wave starts."""

    clusters: list[str] = Field(min_length=1)
    max_parallel: int = Field(default=1, ge=1, le=64)
    soak: str | None = None

    @field_validator("soak")
    @classmethod
    def _check_soak(cls, v: str | None) -> str | None:
        if v is not None:
            from kquota.runtime.deadline import parse_duration

            try:
                parse_duration(v, "soak", minimum=1.0, maximum=7 * 24 * 3600.0)
            except KquotaError as e:
                raise ValueError(str(e)) from None
        return v


class ProjectConfig(_Strict):
    """ProjectConfig is the whole kquota.yaml."""

    clusters: dict[str, ClusterConfig]
    rollout: list[WaveConfig] = Field(default_factory=list)
    _path: Path = PrivateAttr(default=Path(CONFIG_FILENAME))

    @property
    def path(self) -> Path:
        return self._path

    def cluster(self, name: str) -> ClusterConfig:
        try:
            return self.clusters[name]
        except KeyError:
            known = ", ".join(sorted(self.clusters)) or "none"
            raise ConfigError(
                f"{self._path}: no cluster named {name!r} (clusters: {known})"
            ) from None


def load_config(path: str | Path) -> ProjectConfig:
    """load_config reads and validates kquota.yaml; ConfigError with file:line on problems."""
    p = Path(path)
    try:
        text = read_text(p, limit=MAX_CONFIG_BYTES, larger="a kquota.yaml")
    except UnreadableFile as e:
        raise ConfigError(e.message(p, "config")) from None
    data, lines, marks = _load_yaml(text, str(p))
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as e:
        from kquota.config.problems import format_problems

        raise ConfigError(format_problems(e, ProjectConfig, data, marks, str(p))) from None
    config._path = p
    for name, cluster in config.clusters.items():
        cluster._base_dir = p.parent
        cluster._source = str(p)
        cluster._lines = {
            loc[3]: line
            for loc, line in lines.items()
            if len(loc) == 4 and loc[:3] == ("clusters", name, "kafka") and isinstance(loc[3], str)
        }
    return config


def _load_yaml(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int], Marks]:
    # The desired-state reader's composer (kquota.desired.nodes): positions on every node,
    # duplicate keys visible, no recursion, PyYAML's own scalar semantics, and the same
    # bounds on depth, aliases and nodes as every YAML kquota reads.
    from kquota.desired.nodes import YAMLProblem, compose
    from kquota.display import safe_text

    try:
        node = compose(text.encode("utf-8"))
    except YAMLProblem as e:
        raise ConfigError(f"{source}:{e.line}:{e.col}: invalid YAML: {safe_text(e.what)}") from None
    if node is None:
        raise ConfigError(f"{source}:1:1: empty config (it needs at least: clusters:)")
    lines: dict[tuple[str | int, ...], int] = {}
    marks = Marks({}, {})
    return _construct(node, (), lines, marks, source), lines, marks


def _construct(
    node: Node,
    path: tuple[str | int, ...],
    lines: dict[tuple[str | int, ...], int],
    marks: Marks,
    src: str,
) -> Any:
    from kquota.desired.nodes import MapNode, Scalar, SeqNode, scalar_value

    lines[path] = node.line
    marks.values[path] = (node.line, node.col)
    if isinstance(node, MapNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.pairs:
            key_value = scalar_value(key_node) if isinstance(key_node, Scalar) else None
            if not isinstance(key_value, str):
                raise ConfigError(
                    f"{src}:{key_node.line}:{key_node.col}: keys must be strings; "
                    "allowed: a field's name"
                )
            if key_value in out:
                raise ConfigError(
                    f"{src}:{key_node.line}:{key_node.col}: duplicate key {key_value!r}"
                )
            out[key_value] = _construct(value_node, (*path, key_value), lines, marks, src)
            lines[(*path, key_value)] = key_node.line
            marks.keys[(*path, key_value)] = (key_node.line, key_node.col)
        return out
    if isinstance(node, SeqNode):
        return [_construct(n, (*path, i), lines, marks, src) for i, n in enumerate(node.items)]
    return scalar_value(node)
