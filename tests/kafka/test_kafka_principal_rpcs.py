"""The pure parts of discovery's RPC layer: sorting ACL principals, naming the callback."""

from __future__ import annotations

from kquota.kafka.principal_rpcs import AclPrincipals, custom_callback, split_principals


def test_acl_principals_are_users_by_name_the_wildcard_apart_and_others_aside() -> None:
    found = split_principals(
        [
            "User:bob",
            "User:*",
            "User:alice",
            "User:bob",
            "User:CN=svc,OU=kafka",
            "Group:ops",
            "User:",
        ]
    )
    assert found == AclPrincipals(
        users=("CN=svc,OU=kafka", "alice", "bob"), wildcard=True, other=("Group:ops", "User:")
    )
    assert split_principals([]) == AclPrincipals((), False, ())


def test_custom_callback_is_none_only_when_every_broker_uses_the_default() -> None:
    assert custom_callback({1: None, 2: None}) is None
    assert custom_callback({1: None, 2: "com.example.Tenant"}) == "com.example.Tenant"
    assert custom_callback({1: "b.B", 2: "a.A", 3: "b.B"}) == "a.A, b.B"
