"""The interpreter end to end: §1.9 vectors, defaults, headers, tagged fields, error paths."""

from __future__ import annotations

import gc
import re
import struct
from typing import Any

import pytest
from protocol_testlib import bits, f64, framed

import kquota.kafka.protocol as kp
from kquota.kafka.protocol.schema import SpecError, parse_message
from kquota.kafka.protocol.specs import registry

# ---- KAFKA-QUOTA-SEMANTICS.md §1.9 (hand-built, size prefix included) ------------------------

ALICE_1024 = {
    "Entries": [
        {
            "Entity": [{"EntityType": "user", "EntityName": "alice"}],
            "Ops": [{"Key": "producer_byte_rate", "Value": 1024.0, "Remove": False}],
        }
    ],
    "ValidateOnly": False,
}
DEFAULT_USER_REMOVE = {
    "Entries": [
        {
            "Entity": [{"EntityType": "user", "EntityName": None}],
            "Ops": [{"Key": "consumer_byte_rate", "Value": 0.0, "Remove": True}],
        }
    ],
    "ValidateOnly": True,
}
SECTION_1_9 = [
    (
        48,
        1,
        1,
        {"Components": [], "Strict": False},
        "00000014 0030 0001 00000001 0006 6b71756f7461 00 | 01 00 00",
    ),
    (
        48,
        1,
        2,
        {"Components": [{"EntityType": "user", "MatchType": 0, "Match": "alice"}], "Strict": True},
        "00000021 0030 0001 00000002 0006 6b71756f7461 00 |"
        " 02 05 75736572 00 06 616c696365 00 01 00",
    ),
    (
        49,
        1,
        3,
        ALICE_1024,
        "00000040 0031 0001 00000003 0006 6b71756f7461 00 | 02 02 05 75736572 06 616c696365 00 02"
        " 13 70726f64756365725f627974655f72617465 4090000000000000 00 00 00 00 00",
    ),
    (
        49,
        1,
        4,
        DEFAULT_USER_REMOVE,
        "0000003b 0031 0001 00000004 0006 6b71756f7461 00 | 02 02 05 75736572 00 00 02"
        " 13 636f6e73756d65725f627974655f72617465 0000000000000000 01 00 00 01 00",
    ),
    (
        48,
        0,
        5,
        {"Components": [], "Strict": False},
        "00000015 0030 0000 00000005 0006 6b71756f7461 | 00000000 00",
    ),
]


@pytest.mark.parametrize(("api_key", "version", "corr", "body", "frame"), SECTION_1_9)
def test_section_1_9_vectors(
    api_key: int, version: int, corr: int, body: dict[str, Any], frame: str
) -> None:
    payload = framed(frame)
    assert kp.encode_request(api_key, version, corr, "kquota", body) == payload
    header, decoded = kp.decode_request(payload)
    assert header == {
        "RequestApiKey": api_key,
        "RequestApiVersion": version,
        "CorrelationId": corr,
        "ClientId": "kquota",
    }
    assert bits(decoded) == bits(body)


# ---- versions and headers --------------------------------------------------------------------


def test_supported_versions_come_from_the_specs() -> None:
    assert kp.supported_versions(kp.API_VERSIONS) == (0, 4)
    assert kp.supported_versions(kp.SASL_HANDSHAKE) == (0, 1)
    assert kp.supported_versions(kp.SASL_AUTHENTICATE) == (0, 2)
    assert kp.supported_versions(kp.DESCRIBE_CLIENT_QUOTAS) == (0, 1)
    assert kp.supported_versions(kp.ALTER_CLIENT_QUOTAS) == (0, 1)
    with pytest.raises(kp.ProtocolError, match="API key 99"):
        kp.supported_versions(99)


# (api key, version, request header version, response header version): §1.8's table.
HEADER_TABLE = [
    (18, 0, 1, 0),
    (18, 2, 1, 0),
    (18, 3, 2, 0),
    (18, 4, 2, 0),
    (17, 0, 1, 0),
    (17, 1, 1, 0),
    (36, 1, 1, 0),
    (36, 2, 2, 1),
    (48, 0, 1, 0),
    (48, 1, 2, 1),
    (49, 0, 1, 0),
    (49, 1, 2, 1),
]


@pytest.mark.parametrize(("api_key", "version", "request_hv", "response_hv"), HEADER_TABLE)
def test_header_versions(api_key: int, version: int, request_hv: int, response_hv: int) -> None:
    assert kp.request_header_version(api_key, version) == request_hv
    assert kp.response_header_version(api_key, version) == response_hv


def test_api_versions_v3_response_header_has_no_tag_section() -> None:
    body = {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0}
    frame = kp.encode_response(kp.API_VERSIONS, 3, 7, body)
    # header v0 = just the correlation id; then ErrorCode 0000, ApiKeys 01, throttle, tags 00.
    assert frame.hex() == "00000007" + "0000" + "01" + "00000000" + "00"
    correlation_id, decoded = kp.decode_response(kp.API_VERSIONS, 3, frame)
    assert correlation_id == 7
    assert decoded["ApiKeys"] == [] and decoded["FinalizedFeaturesEpoch"] == -1


def test_flexible_quota_response_header_has_a_tag_section() -> None:
    body = {"ThrottleTimeMs": 0, "Entries": []}
    assert kp.encode_response(kp.ALTER_CLIENT_QUOTAS, 1, 7, body).hex().startswith("0000000700")
    assert kp.encode_response(kp.ALTER_CLIENT_QUOTAS, 0, 7, body).hex().startswith("0000000700")
    assert kp.encode_response(kp.ALTER_CLIENT_QUOTAS, 0, 7, body).hex() == "00000007" + "0" * 16


def test_request_header_v2_keeps_the_int16_client_id() -> None:
    frame = kp.encode_request(kp.API_VERSIONS, 3, 9, None, {})
    # key 0012, version 0003, corr, ClientId null as INT16 -1, header tags 00, then the body.
    assert frame.hex().startswith("00120003" + "00000009" + "ffff" + "00")
    header, body = kp.decode_request(frame)
    assert header["ClientId"] is None
    assert body == {"ClientSoftwareName": "", "ClientSoftwareVersion": ""}


def test_unsupported_versions_and_keys_are_protocol_errors() -> None:
    with pytest.raises(kp.ProtocolError, match=r"version 2 is not supported \(valid: 0-1\)"):
        kp.encode_request(kp.DESCRIBE_CLIENT_QUOTAS, 2, 1, "c", {})
    with pytest.raises(kp.ProtocolError, match="API key 1234"):
        kp.decode_request(bytes.fromhex("04d20000000000010000"))
    with pytest.raises(kp.ProtocolError, match="unknown message"):
        kp.encode_body("NoSuchRequest", 0, {})


# ---- defaults, versions, unknown keys --------------------------------------------------------


def test_missing_fields_take_defaults() -> None:
    assert kp.encode_body("DescribeClientQuotasRequest", 1, {}).hex() == "010000"
    assert kp.encode_body("DescribeClientQuotasRequest", 0, {}).hex() == "0000000000"
    # ErrorMessage is nullable, so it defaults to null; a missing array defaults to [].
    assert kp.encode_body("SaslAuthenticateResponse", 0, {}).hex() == "0000" + "ffff" + "00000000"
    element = {"Key": "k"}  # Value defaults to 0.0, Remove to false
    entry = {"Entity": [], "Ops": [element]}
    data = kp.encode_body("AlterClientQuotasRequest", 1, {"Entries": [entry]})
    assert data.hex() == "02" + "01" + "02" + "026b" + "0" * 16 + "00" + "00" + "00" + "00" + "00"


def test_fields_outside_the_version_are_ignored_and_absent() -> None:
    body = {"ClientSoftwareName": "kquota", "ClientSoftwareVersion": "0.1.0"}
    assert kp.encode_body("ApiVersionsRequest", 2, body) == b""
    assert kp.decode_body("ApiVersionsRequest", 2, b"") == {}
    v0 = kp.encode_body("SaslAuthenticateResponse", 0, {"SessionLifetimeMs": 5})
    assert "SessionLifetimeMs" not in kp.decode_body("SaslAuthenticateResponse", 0, v0)
    v1 = kp.encode_body("SaslAuthenticateResponse", 1, {"SessionLifetimeMs": 5})
    assert kp.decode_body("SaslAuthenticateResponse", 1, v1)["SessionLifetimeMs"] == 5


def test_unknown_keys_are_rejected_with_their_path() -> None:
    body = {"Entries": [{"Entity": [{"EntityType": "user", "EntityNme": "a"}], "Ops": []}]}
    with pytest.raises(kp.ProtocolError) as info:
        kp.encode_body("AlterClientQuotasRequest", 1, body)
    assert str(info.value) == (
        "AlterClientQuotasRequest v1: Entries[0].Entity[0]: unknown field(s) ['EntityNme']"
    )


def test_encode_type_errors_name_the_field() -> None:
    body = {"Entries": [{"Entity": [], "Ops": [{"Key": "k", "Value": "fast"}]}]}
    with pytest.raises(kp.ProtocolError) as info:
        kp.encode_body("AlterClientQuotasRequest", 0, body)
    assert info.value.path == "Entries[0].Ops[0].Value"
    assert "expected a number for float64, got str" in str(info.value)
    with pytest.raises(kp.ProtocolError, match=r"v0: Entries\[0\].Entity\[0\].EntityType: null"):
        kp.encode_body(
            "AlterClientQuotasRequest", 0, {"Entries": [{"Entity": [{"EntityType": None}]}]}
        )


# ---- decode errors name the field path -------------------------------------------------------


def _describe_response(n: int) -> dict[str, Any]:
    return {
        "ThrottleTimeMs": 0,
        "ErrorCode": 0,
        "ErrorMessage": None,
        "Entries": [
            {
                "Entity": [{"EntityType": "user", "EntityName": f"u{i}"}],
                "Values": [{"Key": "producer_byte_rate", "Value": 1024.0}],
            }
            for i in range(n)
        ],
    }


def test_truncated_value_error_names_the_full_path() -> None:
    data = kp.encode_body("DescribeClientQuotasResponse", 1, _describe_response(4))
    # The last value's 8 bytes are followed by 3 tag sections (value, entry, body): keep 2 of 8.
    cut = data[: len(data) - 3 - 6]
    with pytest.raises(kp.ProtocolError) as info:
        kp.decode_body("DescribeClientQuotasResponse", 1, cut)
    assert str(info.value) == (
        "DescribeClientQuotasResponse v1: Entries[3].Values[0].Value: "
        "truncated (need 8 bytes, have 2)"
    )
    assert info.value.path == "Entries[3].Values[0].Value"


def test_trailing_garbage_is_rejected() -> None:
    data = kp.encode_body("DescribeClientQuotasResponse", 0, _describe_response(1))
    with pytest.raises(kp.ProtocolError, match="1 trailing bytes"):
        kp.decode_body("DescribeClientQuotasResponse", 0, data + b"\x00")
    frame = kp.encode_response(kp.DESCRIBE_CLIENT_QUOTAS, 1, 1, _describe_response(1))
    with pytest.raises(kp.ProtocolError, match="trailing"):
        kp.decode_response(kp.DESCRIBE_CLIENT_QUOTAS, 1, frame + b"\x00\x00")


def test_null_in_non_nullable_field_is_rejected() -> None:
    data = bytearray(kp.encode_body("AlterClientQuotasRequest", 0, DEFAULT_USER_REMOVE))
    key_at = data.index(b"\x00\x12consumer_byte_rate")
    data[key_at : key_at + 2] = b"\xff\xff"
    with pytest.raises(kp.ProtocolError, match=r"Entries\[0\]\.Ops\[0\]\.Key: null string"):
        kp.decode_body("AlterClientQuotasRequest", 0, bytes(data))


def test_huge_lengths_fail_fast() -> None:
    # Entries count 2**31-1 in v0 and a compact count of 2**32-2 in v1: no allocation, no loop.
    with pytest.raises(kp.ProtocolError, match="Entries: array of 2147483647 elements"):
        kp.decode_body("AlterClientQuotasRequest", 0, bytes.fromhex("7fffffff00"))
    with pytest.raises(kp.ProtocolError, match="Entries: array of 4294967294 elements"):
        kp.decode_body("AlterClientQuotasRequest", 1, bytes.fromhex("ffffffff0f0000"))


# ---- tagged fields ---------------------------------------------------------------------------

API_VERSIONS_V3_WITH_UNKNOWN_TAGS = (
    "0000"  # ErrorCode
    "02"  # ApiKeys: 1 element
    "0030"
    "0000"
    "0001"  # ApiKey 48, 0-1
    "01"
    "05"
    "02"
    "abcd"  # element tag section: 1 field, tag 5, 2 bytes (unknown)
    "00000000"  # ThrottleTimeMs
    "04"  # body tag section: 4 fields, ascending
    "01"
    "08"
    "000000000000002a"  # tag 1 FinalizedFeaturesEpoch = 42
    "03"
    "01"
    "01"  # tag 3 ZkMigrationReady = true
    "07"
    "00"  # tag 7: unknown, empty
    "09"
    "03"
    "010203"  # tag 9: unknown
)


def test_unknown_tags_are_kept_and_re_emitted_in_order() -> None:
    data = bytes.fromhex(API_VERSIONS_V3_WITH_UNKNOWN_TAGS)
    body = kp.decode_body("ApiVersionsResponse", 3, data)
    assert body == {
        "ErrorCode": 0,
        "ApiKeys": [
            {"ApiKey": 48, "MinVersion": 0, "MaxVersion": 1, kp.UNKNOWN_TAGS: {5: b"\xab\xcd"}}
        ],
        "ThrottleTimeMs": 0,
        "SupportedFeatures": [],
        "FinalizedFeaturesEpoch": 42,
        "FinalizedFeatures": [],
        "ZkMigrationReady": True,
        kp.UNKNOWN_TAGS: {7: b"", 9: b"\x01\x02\x03"},
    }
    assert kp.encode_body("ApiVersionsResponse", 3, body) == data
    # The order of the dict does not matter: tags are merged and written ascending.
    body[kp.UNKNOWN_TAGS] = {9: b"\x01\x02\x03", 7: b""}
    assert kp.encode_body("ApiVersionsResponse", 3, body) == data


def test_default_tagged_fields_are_not_written() -> None:
    body = {
        "ErrorCode": 0,
        "ApiKeys": [],
        "ThrottleTimeMs": 0,
        "SupportedFeatures": [],
        "FinalizedFeaturesEpoch": -1,
        "FinalizedFeatures": [],
        "ZkMigrationReady": False,
    }
    assert kp.encode_body("ApiVersionsResponse", 4, body).hex() == "0000010000000000"


def test_unknown_tag_that_is_known_is_rejected() -> None:
    with pytest.raises(kp.ProtocolError, match="tag 1 is a known field"):
        kp.encode_body("ApiVersionsResponse", 3, {kp.UNKNOWN_TAGS: {1: b"\x00"}})
    with pytest.raises(kp.ProtocolError, match="non-flexible"):
        kp.encode_body("ApiVersionsResponse", 2, {kp.UNKNOWN_TAGS: {8: b""}})


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ("01010400000000", r"FinalizedFeaturesEpoch: truncated \(need 8 bytes, have 4\)"),
        ("0103020101", "ZkMigrationReady: tagged field holds 2 bytes but uses 1"),
        ("0207000700", "_tagged_fields: tag 7 appears twice"),
        ("01010800000000", r"_tagged_fields: truncated \(need 8 bytes, have 4\)"),
        ("01070500", r"_tagged_fields: truncated \(need 5 bytes, have 1\)"),
        ("7f", "_tagged_fields: 127 tagged fields cannot fit"),
    ],
)
def test_bad_tag_sections(tags: str, message: str) -> None:
    data = bytes.fromhex("00000100000000" + tags)
    with pytest.raises(kp.ProtocolError, match=f"^ApiVersionsResponse v3: {message}"):
        kp.decode_body("ApiVersionsResponse", 3, data)


def test_unknown_tags_survive_in_nested_quota_entries() -> None:
    body = _describe_response(2)
    body["Entries"][1]["Values"][0][kp.UNKNOWN_TAGS] = {42: b"future"}
    data = kp.encode_body("DescribeClientQuotasResponse", 1, body)
    assert kp.decode_body("DescribeClientQuotasResponse", 1, data) == body


# ---- floats through whole messages -----------------------------------------------------------

SPECIAL = ["8000000000000000", "7fe1ccf385ebc8a0", "0000000000000001", "7ff80000deadbeef"]


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("hex_bits", SPECIAL)
def test_float64_values_survive_whole_messages(version: int, hex_bits: str) -> None:
    body = _describe_response(1)
    body["Entries"][0]["Values"][0]["Value"] = f64(hex_bits)
    data = kp.encode_body("DescribeClientQuotasResponse", version, body)
    assert bytes.fromhex(hex_bits) in data
    decoded = kp.decode_body("DescribeClientQuotasResponse", version, data)
    assert struct.pack(">d", decoded["Entries"][0]["Values"][0]["Value"]).hex() == hex_bits


# ---- specs and public surface ----------------------------------------------------------------


def test_every_spec_loads_with_the_expected_ranges() -> None:
    specs = registry().by_name
    assert {name: str(s.valid_versions) for name, s in specs.items()} == {
        "AlterClientQuotasRequest": "0-1",
        "AlterClientQuotasResponse": "0-1",
        "ApiVersionsRequest": "0-4",
        "ConsumerGroupDescribeRequest": "0-1",
        "ConsumerGroupDescribeResponse": "0-1",
        "DescribeAclsRequest": "1-3",
        "DescribeAclsResponse": "1-3",
        "DescribeConfigsRequest": "1-4",
        "DescribeConfigsResponse": "1-4",
        "DescribeGroupsRequest": "0-6",
        "DescribeGroupsResponse": "0-6",
        "DescribeUserScramCredentialsRequest": "0-0",
        "DescribeUserScramCredentialsResponse": "0-0",
        "ListGroupsRequest": "0-5",
        "ListGroupsResponse": "0-5",
        "ApiVersionsResponse": "0-4",
        "DescribeClusterRequest": "0-2",
        "DescribeClusterResponse": "0-2",
        "DescribeClientQuotasRequest": "0-1",
        "DescribeClientQuotasResponse": "0-1",
        "MetadataRequest": "0-13",
        "MetadataResponse": "0-13",
        "RequestHeader": "1-2",
        "ResponseHeader": "0-1",
        "SaslAuthenticateRequest": "0-2",
        "SaslAuthenticateResponse": "0-2",
        "SaslHandshakeRequest": "0-1",
        "SaslHandshakeResponse": "0-1",
    }
    flexible = {name: str(s.flexible_versions) for name, s in specs.items()}
    assert flexible["SaslHandshakeRequest"] == "none"
    assert flexible["ApiVersionsResponse"] == "3+"
    assert flexible["MetadataRequest"] == flexible["MetadataResponse"] == "9+"
    assert flexible["DescribeUserScramCredentialsRequest"] == "0+"
    assert flexible["ConsumerGroupDescribeResponse"] == "0+"
    assert flexible["DescribeAclsRequest"] == flexible["DescribeAclsResponse"] == "2+"
    assert flexible["DescribeConfigsRequest"] == flexible["DescribeConfigsResponse"] == "4+"
    assert flexible["DescribeGroupsRequest"] == flexible["DescribeGroupsResponse"] == "5+"
    assert flexible["ListGroupsRequest"] == flexible["ListGroupsResponse"] == "3+"


def test_public_surface_is_sorted_and_importable() -> None:
    assert kp.__all__ == sorted(kp.__all__)
    for name in kp.__all__:
        assert getattr(kp, name) is not None
    assert re.fullmatch(r"_\w+", kp.UNKNOWN_TAGS)


# ---- large payloads --------------------------------------------------------------------------


def test_large_payload_decodes_and_restores_gc_state() -> None:
    """Large bodies take the GC-paused path; the GC must come back on, even after an error."""
    body = _describe_response(5000)
    data = kp.encode_body("DescribeClientQuotasResponse", 1, body)
    assert len(data) > 1 << 16, "the test must exercise the large-payload path"
    assert gc.isenabled()
    assert kp.decode_body("DescribeClientQuotasResponse", 1, data) == body
    assert gc.isenabled()
    with pytest.raises(kp.ProtocolError, match=r"Entries\[4999\]"):
        kp.decode_body("DescribeClientQuotasResponse", 1, data[:-5])
    assert gc.isenabled()
    gc.disable()
    try:
        kp.decode_body("DescribeClientQuotasResponse", 1, data)
        assert not gc.isenabled(), "a caller's disabled GC must stay disabled"
    finally:
        gc.enable()


def test_a_single_struct_field_defaults_to_its_fields_defaults() -> None:
    """ConsumerGroupDescribe's Assignment is one struct, not an array: left out on encode it
    is written as an empty struct, as the Java client writes a fresh Assignment."""
    body = {"Groups": [{"GroupId": "g", "Members": [{"MemberId": "m", "ClientId": "c"}]}]}
    decoded = kp.decode_body(
        "ConsumerGroupDescribeResponse", 1, kp.encode_body("ConsumerGroupDescribeResponse", 1, body)
    )
    member = decoded["Groups"][0]["Members"][0]
    assert member["Assignment"] == member["TargetAssignment"] == {"TopicPartitions": []}
    assert member["MemberType"] == -1


def test_a_struct_type_without_fields_is_a_spec_error() -> None:
    doc = {
        "apiKey": 1000,
        "type": "response",
        "name": "X",
        "validVersions": "0",
        "fields": [{"name": "A", "type": "Assignment", "versions": "0+"}],
    }
    with pytest.raises(SpecError, match=r"X\.A: unknown type 'Assignment'"):
        parse_message(doc, "X.json")
