"""TLS contexts from ``ssl.*`` properties: PEM files only, hostname verification on by default.

Certificates are always verified (there is no "trust anything" switch); only the hostname
check can be turned off, with ``ssl.endpoint.identification.algorithm=none``, as in Kafka.
"""

from __future__ import annotations

import ssl

from kquota.errors import UsageError
from kquota.kafka.config import ClientConfig


def ssl_context(config: ClientConfig) -> ssl.SSLContext:
    """ssl_context builds the client context; file problems become a UsageError."""
    try:
        ctx = ssl.create_default_context(
            cafile=str(config.ssl_ca_location) if config.ssl_ca_location else None
        )
    except (OSError, ssl.SSLError) as e:
        shown = config.show("ssl.ca.location", str(config.ssl_ca_location))
        reason = e.strerror if isinstance(e, OSError) and e.strerror else e.__class__.__name__
        where = config.provenance.at("ssl.ca.location")
        raise UsageError(f"{where}{shown}: cannot load CAs: {reason}") from None
    ctx.check_hostname = config.ssl_check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED
    if config.ssl_certificate_location is not None:
        try:
            ctx.load_cert_chain(
                str(config.ssl_certificate_location),
                str(config.ssl_key_location) if config.ssl_key_location else None,
                password=config.ssl_key_password,
            )
        except (OSError, ssl.SSLError) as e:
            # The error names the files, never the key password.
            cert = config.show("ssl.certificate.location", str(config.ssl_certificate_location))
            key = config.show("ssl.key.location", str(config.ssl_key_location))
            raise UsageError(
                f"{config.provenance.at('ssl.certificate.location')}"
                f"cannot load client certificate {cert} / key {key}: "
                f"{getattr(e, 'reason', None) or e.__class__.__name__}"
            ) from None
    elif config.ssl_key_location is not None:
        raise UsageError("ssl.key.location needs ssl.certificate.location")
    return ctx
