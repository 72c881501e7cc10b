"""Running a converter on text and on the samples, as the tests of each source do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kquota.desired.problems import Problems
from kquota.migrate.common import Declared, merge_declared
from kquota.model import Entity

SAMPLES = Path(__file__).parent / "samples"
GIB = 1073741824.0

EXPECTED: dict[str, dict[Entity, dict[str, float]]] = {
    "strimzi": {
        Entity.of({"user": None}): {
            "producer_byte_rate": 1073741824.0,
            "consumer_byte_rate": 2147483648.0,  # a Long in the Kafka resource: above 2**31
            "controller_mutation_rate": 500.0,
        },
        Entity.of({"user": "CN=orders-tls"}): {
            "producer_byte_rate": 1048576.0,
            "consumer_byte_rate": 2097152.0,
            "request_percentage": 55.0,
            "controller_mutation_rate": 10.0,
        },
        Entity.of({"user": "billing-scram"}): {
            "producer_byte_rate": 4194304.0,
            "request_percentage": 25.0,
        },
        Entity.of({"user": "reports-oauth"}): {
            "consumer_byte_rate": 8388608.0,
            "controller_mutation_rate": 0.5,
        },
        Entity.of({"user": "CN=external-tls"}): {"producer_byte_rate": 524288.0},
        Entity.of({"user": "search-scram"}): {"consumer_byte_rate": 3145728.0},
    },
    "jikkou": {
        Entity.of({"user": None}): {"producer_byte_rate": GIB, "consumer_byte_rate": GIB},
        Entity.of({"user": "my-user"}): {
            "request_percentage": 10.0,
            "producer_byte_rate": 1024.0,
            "consumer_byte_rate": 1024.0,
        },
        Entity.of({"user": "my-user", "client-id": "my-client"}): {"producer_byte_rate": 2048.0},
        Entity.of({"user": "other-user", "client-id": None}): {
            "consumer_byte_rate": 4096.0,
            "request_percentage": 12.5,
        },
        Entity.of({"client-id": None}): {"consumer_byte_rate": GIB},
        Entity.of({"client-id": "my-client"}): {
            "request_percentage": 10.0,
            "producer_byte_rate": 1024.0,
            "consumer_byte_rate": 1024.0,
        },
        Entity.of({"client-id": "other-client"}): {"producer_byte_rate": 8192.0},
    },
    "terraform": {
        # show -json state, root module and module.edge
        Entity.of({"user": None}): {"consumer_byte_rate": 2e9, "producer_byte_rate": 1e9},
        Entity.of({"user": "payment-service"}): {
            "consumer_byte_rate": 1e7,
            "producer_byte_rate": 1e7,
            "request_percentage": 400.0,
        },
        Entity.of({"client-id": "mobile-app-v1"}): {
            "consumer_byte_rate": 5e6,
            "producer_byte_rate": 2.5e6,
            "request_percentage": 200.0,
        },
        Entity.of({"ip": "203.0.113.0"}): {"connection_creation_rate": 10.0},
        # show -json plan: what the state will be once applied
        Entity.of({"user": "batch-loader"}): {"producer_byte_rate": 52428800.0},
        Entity.of({"client-id": "acme"}): {"consumer_byte_rate": 20971520.0},
        # terraform.tfstate v4: for_each instances and a module's default entity
        Entity.of({"user": "analytics"}): {
            "consumer_byte_rate": 15728640.0,
            "request_percentage": 150.0,
        },
        Entity.of({"user": "search"}): {"consumer_byte_rate": 31457280.0},
        Entity.of({"client-id": None}): {"producer_byte_rate": 1073741824.0},
    },
}
"""What each source's samples declare, written by hand from the sample files."""


Converter = Callable[[Sequence[tuple[str, bytes]], Problems], list[Declared]]


@dataclass
class Converted:
    """Converted is a converter's result in the shape tests compare: the merged state, the
    refusals and the notes, each as printed."""

    state: dict[Entity, dict[str, float]]
    declared: list[Declared]
    problems: list[str]
    warnings: list[str]


def convert(converter: Converter, *files: tuple[str, str | bytes]) -> Converted:
    problems = Problems()
    data = [(n, t.encode() if isinstance(t, str) else t) for n, t in files]
    declared = converter(data, problems)
    state = merge_declared(declared, problems)
    return Converted(
        state,
        declared,
        [str(p) for p in sorted(problems.items)],
        [str(w) for w in problems.warnings],
    )


def samples(source: str) -> list[tuple[str, bytes]]:
    """samples are the published-schema sample files of a source, named relative."""
    folder = SAMPLES / source
    return [(f"{source}/{p.name}", p.read_bytes()) for p in sorted(folder.iterdir())]
