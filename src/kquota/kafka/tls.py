"""TLS contexts from ``ssl.*`` properties: PEM files only, hostname verification on by default.

Certificates are always verified (there is no "trust anything" switch); only the hostname
check can be turned off, with ``ssl.endpoint.identification.algorithm=none``, as in Kafka.
"""

from __future__ import annotations

import ssl

from kquota.errors import UsageError
from kquota.kafka.config import ClientConfig


def error_words(e: BaseException) -> str:
    """error_words: what went wrong, in words: OpenSSL's reason (``no certificate or crl
    found``) or the system's, never a Python class's name nor OpenSSL's source line."""
    if isinstance(e, ssl.SSLError):
        reason = str(getattr(e, "reason", None) or "")
        return reason.replace("_", " ").lower() or "not a PEM file TLS can use"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or "unreadable"


def ssl_context(config: ClientConfig) -> ssl.SSLContext:
    """ssl_context builds the client context; file problems become a UsageError."""
    try:
        ctx = ssl.create_default_context(
            cafile=str(config.ssl_ca_location) if config.ssl_ca_location else None
        )
    except (OSError, ssl.SSLError) as e:
        shown = config.show("ssl.ca.location", str(config.ssl_ca_location))
        reason = error_words(e)
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
                f"{error_words(e)}"
            ) from None
    elif config.ssl_key_location is not None:
        raise UsageError("ssl.key.location needs ssl.certificate.location")
    return ctx
