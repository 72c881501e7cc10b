"""Say who was denied what: CLUSTER_AUTHORIZATION_FAILED carries only a code (and, for
DescribeClientQuotas, no message at all), so kquota names the principal, the operation and the
resource each quota API needs, as Kafka's authorizer checks them:

* DescribeClientQuotas needs DESCRIBE_CONFIGS on the CLUSTER resource (``kafka-cluster``);
* AlterClientQuotas (validate-only too) needs ALTER_CONFIGS on CLUSTER (which also implies
  DESCRIBE_CONFIGS);
* for ``--impact``: DescribeUserScramCredentials and DescribeAcls need DESCRIBE on CLUSTER,
  DescribeConfigs of a broker needs DESCRIBE_CONFIGS on CLUSTER.

The principal is the one this client authenticates as when kquota can know it: ``User:NAME``
for SASL PLAIN and SCRAM with Kafka's default principal builder; otherwise (OAUTHBEARER, a
client certificate) "the connection's principal".
"""

from __future__ import annotations

from kquota.display import safe_text
from kquota.kafka.config import ClientConfig
from kquota.kafka.protocol import (
    ALTER_CLIENT_QUOTAS,
    DESCRIBE_ACLS,
    DESCRIBE_CLIENT_QUOTAS,
    DESCRIBE_CONFIGS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
)

# api key -> (API name, ACL operation as the authorizer names it, as kafka-acls spells it)
_NEEDS: dict[int, tuple[str, str, str]] = {
    DESCRIBE_CLIENT_QUOTAS: ("DescribeClientQuotas", "DESCRIBE_CONFIGS", "DescribeConfigs"),
    ALTER_CLIENT_QUOTAS: ("AlterClientQuotas", "ALTER_CONFIGS", "AlterConfigs"),
    # What --impact's discovery asks (kquota.kafka.principal_rpcs).
    DESCRIBE_USER_SCRAM_CREDENTIALS: ("DescribeUserScramCredentials", "DESCRIBE", "Describe"),
    DESCRIBE_ACLS: ("DescribeAcls", "DESCRIBE", "Describe"),
    DESCRIBE_CONFIGS: ("DescribeConfigs", "DESCRIBE_CONFIGS", "DescribeConfigs"),
}


def principal_of(config: ClientConfig) -> str | None:
    """principal_of is the Kafka principal this config authenticates as, if kquota can tell."""
    return principal_name(config.security_protocol, config.sasl_mechanism, config.sasl_username)


def principal_name(
    security_protocol: str, sasl_mechanism: str | None, sasl_username: str | None
) -> str | None:
    """principal_name is the principal Kafka's default principal builder gives a client with
    these settings, or None when only the broker knows it (OAUTHBEARER, a certificate)."""
    if security_protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        if (sasl_mechanism or "PLAIN") == "OAUTHBEARER" or not sasl_username:
            return None
        return f"User:{sasl_username}"
    if security_protocol == "PLAINTEXT":
        return "User:ANONYMOUS"
    return None


def shown_principal(config: ClientConfig) -> str:
    """shown_principal is the principal of ``config`` as a message names it: ``User:NAME``,
    ``User:<VAR>`` for a user name read from ``${VAR}``, else "the connection's principal"."""
    principal = principal_of(config)
    if principal is not None and config.provenance.hides("sasl.username"):
        # The user name came from a ${VAR}: say which, never what it holds.
        return f"User:<{config.provenance.name('sasl.username')}>"
    return safe_text(principal) if principal else "the connection's principal"


def denial(api_key: int, config: ClientConfig) -> str:
    """denial says which principal lacks which operation on which resource for ``api_key``."""
    api, operation, acl_operation = _NEEDS[api_key]
    who = shown_principal(config)
    text = f"{who} is not allowed {operation} on the CLUSTER resource, which {api} needs"
    if principal_of(config) is not None:
        text += (
            f"; grant it with: kafka-acls --add --allow-principal {who} "
            f"--operation {acl_operation} --cluster"
        )
    return text
