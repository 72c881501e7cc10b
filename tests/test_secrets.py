"""One rule masks secrets everywhere properties are printed."""

from __future__ import annotations

from kquota.secrets import MASK, is_secret, mask
from kquota.target import Target

JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="pw-1";'
)
PROPS = {
    "bootstrap.servers": "b:9092",
    "sasl.jaas.config": JAAS,
    "sasl.password": "pw-2",
    "ssl.key.password": "pw-3",
    "sasl.oauthbearer.token": "t0k3n-value",
    "sasl.username": "u",
}


def test_every_printer_masks_the_same_keys() -> None:
    expected = {k: (MASK if k not in ("bootstrap.servers", "sasl.username") else v)
                for k, v in PROPS.items()}  # fmt: skip
    assert mask(PROPS) == expected
    assert is_secret("SASL.JAAS.CONFIG") and not is_secret("security.protocol")


def test_target_repr_never_shows_a_secret() -> None:
    text = repr(Target(cluster_name="prod", properties=dict(PROPS)))
    for secret in ("pw-1", "pw-2", "pw-3", "t0k3n-value"):
        assert secret not in text
    assert "b:9092" in text
