"""A broker without an API, or without a version kquota speaks, is named as such: "not
supported by this broker", with the release that brought the API. Brokers older than 3.0 do
not run on this machine's Java 17, so the broker's ApiVersions table is given here (a fake
for what no broker in the matrix lacks); the live matrix records the real tables."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kquota.kafka.conn import BrokerConnection
from kquota.kafka.errors import UnsupportedVersionError
from kquota.kafka.protocol import (
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_CLIENT_QUOTAS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
)
from kquota.principals.live import _look


def _broker(versions: dict[int, tuple[int, int]]) -> Any:
    return SimpleNamespace(
        address="127.0.0.1:9092", shown="127.0.0.1:9092", broker_versions=versions
    )


@pytest.mark.parametrize(
    ("api", "says"),
    [
        (
            CONSUMER_GROUP_DESCRIBE,
            "ConsumerGroupDescribe is not supported by this broker (127.0.0.1:9092) "
            "(it came with Kafka 4.0 (KIP-848))",
        ),
        (
            DESCRIBE_USER_SCRAM_CREDENTIALS,
            "DescribeUserScramCredentials is not supported by this broker (127.0.0.1:9092) "
            "(it came with Kafka 2.7 (KIP-554))",
        ),
    ],
)
def test_a_missing_api_is_not_supported_by_this_broker(api: int, says: str) -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        BrokerConnection.version_for(_broker({}), api)
    assert says in str(info.value)


def test_a_version_range_kquota_does_not_speak_names_both_ranges() -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        BrokerConnection.version_for(
            _broker({DESCRIBE_CLIENT_QUOTAS: (7, 9)}), DESCRIBE_CLIENT_QUOTAS
        )
    assert (
        "DescribeClientQuotas v0-1 is not supported by this broker (127.0.0.1:9092), which "
        "speaks v7-9; kquota needs Kafka 2.6 or newer (KIP-546 client-quota APIs)"
    ) in str(info.value)


def test_an_impact_source_reports_it_as_its_reason() -> None:
    """What principals.live makes of it: the source found nothing and says why."""

    class Admin:
        def run(self, job: Any) -> Any:
            BrokerConnection.version_for(_broker({}), DESCRIBE_USER_SCRAM_CREDENTIALS)

    found, reason = _look(Admin(), "scram-users", lambda core: None)  # type: ignore[arg-type,return-value]
    assert found is None
    assert reason is not None and "not supported by this broker" in reason and "2.7" in reason
