"""The data-plane client's configuration: kquota's Kafka client properties as a librdkafka
(confluent-kafka) config, and the scrubbing that keeps their secrets out of its messages.

kquota's own wire codec (:mod:`kquota.kafka.admin`) speaks only the quota admin RPCs; the
audit trail (:mod:`kquota.audit`, :mod:`kquota.history.trail`) and the apply lease
(:mod:`kquota.apply.lease_log`) produce and read records with librdkafka, configured here.

Secrets never reach a message or a log line: librdkafka echoes invalid property *values* in
its errors ("Invalid value "..." for configuration property"), so every error string and
every librdkafka log line its users pass on is scrubbed of the secret values it was given.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kquota.errors import KquotaError, UsageError
from kquota.secrets import is_secret

DEFAULT_TIMEOUT = 30.0
"""How long a record's delivery may take, by default (``message.timeout.ms``)."""


class LibrdkafkaConfigError(KquotaError):
    """LibrdkafkaConfigError: a client property librdkafka cannot take (named, never its
    value)."""


# Java client properties librdkafka does not know and that carry nothing the producer needs.
_JAVA_ONLY_IGNORED = frozenset(
    {
        "default.api.timeout.ms",
        "ssl.truststore.type",
        "ssl.keystore.type",
        "sasl.login.class",
    }
)
# Java properties whose content librdkafka cannot take in the same form: refused by name.
_JAVA_ONLY_REFUSED = {
    "ssl.keystore.location": "use ssl.certificate.location and ssl.key.location (PEM)",
    "ssl.keystore.password": "use ssl.key.password with PEM keys",
    "ssl.truststore.password": "use a PEM ssl.ca.location (no password)",
    "sasl.client.callback.handler.class": "not supported by librdkafka",
    "sasl.login.callback.handler.class": "not supported by librdkafka",
}

FORCED = {"enable.idempotence": "true", "acks": "all", "allow.auto.create.topics": "false"}
"""The producer's own guarantees: never taken from the user's properties."""

PRODUCER_ONLY = frozenset({*FORCED, "message.timeout.ms"})
"""What :func:`producer_config` adds that only a producer takes."""


LEADER_MOVING = frozenset(
    {
        "NOT_LEADER_FOR_PARTITION",
        "LEADER_NOT_AVAILABLE",
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "REPLICA_NOT_AVAILABLE",
    }
)
"""Partition errors while a partition's leadership moves: a topic just created, a broker
failing over. librdkafka retries them itself when producing and fetching, but its offset
queries (``get_watermark_offsets``) raise them at once."""


def error_code(e: BaseException) -> int | None:
    """error_code is the KafkaError code a KafkaException carries (None: it carries none)."""
    from confluent_kafka import KafkaError

    err = e.args[0] if e.args else None
    return err.code() if isinstance(err, KafkaError) else None


def leader_moving(e: BaseException) -> bool:
    """leader_moving: ``e`` (a KafkaException) says the partition's leader is moving, so the
    same question asked again shortly gets an answer."""
    err: Any = e.args[0] if e.args else None
    return hasattr(err, "name") and err.name() in LEADER_MOVING


def producer_config(
    client_properties: Mapping[str, str], *, timeout: float = DEFAULT_TIMEOUT
) -> dict[str, str]:
    """producer_config maps kquota's Kafka client properties to a librdkafka producer config.

    Most names are shared (bootstrap.servers, security.protocol, sasl.mechanism, sasl.username,
    sasl.password, ssl.ca.location, ...) and pass through. Java-only forms are translated where
    the meaning is the same: ``sasl.jaas.config`` (PLAIN/SCRAM login module) becomes
    sasl.username/password, a PEM ``ssl.truststore.location`` becomes ``ssl.ca.location``, and
    an empty ``ssl.endpoint.identification.algorithm`` (Java's "off") becomes ``none``. Forms
    librdkafka cannot read (JKS stores) raise :class:`LibrdkafkaConfigError` naming the
    property, never its value. ``timeout`` bounds each record's delivery
    (``message.timeout.ms``).
    """
    props = dict(client_properties)
    out: dict[str, str] = {}
    jaas = props.pop("sasl.jaas.config", None)
    if jaas is not None:
        from kquota.kafka.config import parse_jaas_config

        try:
            username, password = parse_jaas_config(jaas, None)
        except UsageError as e:
            raise LibrdkafkaConfigError(str(e)) from None
        if username is None or password is None:
            raise LibrdkafkaConfigError(
                "sasl.jaas.config: the audit producer needs a username and a password in it "
                "(or set sasl.username and sasl.password)"
            )
        out["sasl.username"] = username
        out["sasl.password"] = password
    truststore = props.pop("ssl.truststore.location", None)
    if truststore is not None:
        store_type = props.get("ssl.truststore.type", "JKS").upper()
        if store_type != "PEM":
            raise LibrdkafkaConfigError(
                f"ssl.truststore.location: librdkafka cannot read a {store_type} truststore; "
                "give ssl.ca.location (PEM) or set ssl.truststore.type=PEM"
            )
        out["ssl.ca.location"] = truststore
    if props.get("ssl.endpoint.identification.algorithm") == "":
        props["ssl.endpoint.identification.algorithm"] = "none"
    for name, value in props.items():
        if name in _JAVA_ONLY_IGNORED:
            continue
        if name in _JAVA_ONLY_REFUSED:
            raise LibrdkafkaConfigError(
                f"{name}: cannot be used by the audit producer: {_JAVA_ONLY_REFUSED[name]}"
            )
        out.setdefault(name, value)
    out.update(FORCED)
    out["message.timeout.ms"] = str(max(1, int(timeout * 1000)))
    return out


def consumer_config(
    client_properties: Mapping[str, str], log: logging.Logger
) -> tuple[dict[str, Any], Callable[[str], str]]:
    """consumer_config is a librdkafka config for reading the trail back, and the function
    that removes its secrets from any text: the producer's connection settings (mapped as
    :func:`producer_config` maps them) without the producer's own, in no consumer group and
    committing nothing, so reading leaves no trace on the cluster. librdkafka's log lines go
    to ``log``, scrubbed."""
    mapped = producer_config(client_properties)
    settings: dict[str, Any] = {k: v for k, v in mapped.items() if k not in PRODUCER_ONLY}
    scrub = Scrubber(client_properties, extra=(v for k, v in mapped.items() if is_secret(k)))
    settings.update(
        {
            # librdkafka wants a group id even for a consumer that only assigns partitions;
            # with auto-commit off no group is ever joined or written.
            "group.id": "kquota-audit-reader",
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            "allow.auto.create.topics": "false",
            "logger": ScrubbingLogger(scrub, log),
        }
    )
    return settings, scrub


class Scrubber:
    """Scrubber replaces known secret values in text; applied to every outgoing message."""

    def __init__(self, config: Mapping[str, Any], extra: Iterable[str] = ()) -> None:
        values = {str(v) for k, v in config.items() if is_secret(k) and str(v)}
        values.update(s for s in extra if s)
        # Longest first, so a secret containing another secret is replaced whole.
        self._secrets = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


class ScrubbingLogger:
    """ScrubbingLogger receives librdkafka's log lines (confluent-kafka ``logger``) and
    forwards them to ``log`` at DEBUG with secrets removed, instead of stderr; the last error
    line is kept for the message that reaches the user."""

    def __init__(self, scrub: Scrubber, log: logging.Logger) -> None:
        self._scrub = scrub
        self._log = log
        self.last_error: str | None = None

    def log(self, level: int, msg: str, *args: object) -> None:
        text = self._scrub(msg % args if args else msg)
        if level >= logging.ERROR:
            self.last_error = text
        # DEBUG only: a dead broker makes librdkafka log every reconnect; what matters reaches
        # the user once, in the client's error.
        self._log.debug("%s", text)


__all__ = [
    "DEFAULT_TIMEOUT",
    "FORCED",
    "PRODUCER_ONLY",
    "LibrdkafkaConfigError",
    "Scrubber",
    "ScrubbingLogger",
    "consumer_config",
    "producer_config",
]
