"""Client configuration in Kafka's own property names, so tools' ``--command-config`` files work.

Supported properties (everything else is an error that lists these):

=========================================  ==============================================
``bootstrap.servers``                      ``host:port[,host:port...]``
``security.protocol``                      PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
``sasl.mechanism``                         PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
``sasl.username`` / ``sasl.password``      librdkafka's names for the SASL credentials
``sasl.jaas.config``                       Java's form: ``username="…" password="…"`` is read
                                           out of a PlainLoginModule / ScramLoginModule line
``sasl.oauthbearer.token``                 kquota's own: a static OAUTHBEARER token
``sasl.oauthbearer.token.file``            kquota's own: a file holding the token, re-read
                                           for every new connection (rotated tokens work)
``ssl.ca.location``                        PEM file of trusted CAs (default: system store)
``ssl.certificate.location``               PEM client certificate (mutual TLS)
``ssl.key.location`` / ``ssl.key.password``  PEM private key and its passphrase
``ssl.endpoint.identification.algorithm``  ``https`` (default) verifies the broker's host
                                           name; ``none`` or empty turns that off
``client.id``                              default ``kquota``
``request.timeout.ms``                     per request, default 30000
``retries``                                retriable failures retried, default 5
``retry.backoff.ms``                       first backoff, doubled each time, default 100
=========================================  ==============================================

Java keystores (``ssl.truststore.*``, ``ssl.keystore.*``) are rejected with a pointer to the
PEM equivalents: Python's ssl module reads PEM, not JKS/PKCS12 stores.

Secrets (passwords, tokens, the JAAS line) never appear in ``repr``/``str`` of a config, in
exception messages, or in logs: messages name the property, never its value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from kquota.errors import UsageError
from kquota.localfile import UnreadableFile, read_text
from kquota.properties import MAX_CONFIG_BYTES
from kquota.secrets import MASK, NO_PROVENANCE, Provenance, looks_like_property_name

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

ALLOWED_KEYS = (
    "bootstrap.servers",
    "security.protocol",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
    "sasl.jaas.config",
    "sasl.oauthbearer.token",
    "sasl.oauthbearer.token.file",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "client.id",
    "request.timeout.ms",
    "retries",
    "retry.backoff.ms",
)

# Java-client keys with a PEM/kquota equivalent: say which instead of "unknown key".
_JAVA_ONLY = {
    "ssl.truststore.location": "use ssl.ca.location (a PEM file)",
    "ssl.truststore.password": "use ssl.ca.location (a PEM file, no password)",
    "ssl.truststore.type": "use ssl.ca.location (a PEM file)",
    "ssl.truststore.certificates": "use ssl.ca.location (a PEM file)",
    "ssl.keystore.location": "use ssl.certificate.location and ssl.key.location (PEM files)",
    "ssl.keystore.password": "use ssl.key.password with ssl.key.location (PEM)",
    "ssl.keystore.type": "use ssl.certificate.location and ssl.key.location (PEM files)",
    "ssl.keystore.key": "use ssl.key.location (a PEM file)",
    "ssl.keystore.certificate.chain": "use ssl.certificate.location (a PEM file)",
    "sasl.login.callback.handler.class": "OAUTHBEARER: use sasl.oauthbearer.token(.file)",
    "sasl.client.callback.handler.class": "use sasl.username / sasl.password",
    "sasl.kerberos.service.name": "GSSAPI (Kerberos) is not supported",
}

_JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
}
_JAAS_FLAGS = ("required", "requisite", "sufficient", "optional")


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """ClientConfig is a validated client configuration; its repr masks every secret."""

    bootstrap_servers: tuple[str, ...] = ()
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    oauthbearer_token: str | None = field(default=None, repr=False)
    oauthbearer_token_file: Path | None = None
    ssl_ca_location: Path | None = None
    ssl_certificate_location: Path | None = None
    ssl_key_location: Path | None = None
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    client_id: str = "kquota"
    request_timeout_ms: int = 30_000
    retries: int = 5
    retry_backoff_ms: int = 100
    provenance: Provenance = field(default=NO_PROVENANCE, repr=False, compare=False)

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def uses_ssl(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            if f.name == "provenance":
                continue
            value = getattr(self, f.name)
            if f.name in ("sasl_password", "oauthbearer_token", "ssl_key_password") or (
                self.provenance.hides(_property_of(f.name))
            ):
                value = None if value is None else MASK
            parts.append(f"{f.name}={value!r}")
        return f"ClientConfig({', '.join(parts)})"

    __str__ = __repr__

    def show(self, prop: str, value: object) -> str:
        """show names ``prop`` and its value for a message, or only the property (and the
        ``${VAR}`` it came from) when the value is a secret or came from a variable."""
        return self.provenance.show(prop, value)

    def show_address(self, address: str) -> str:
        """show_address is ``address`` for a message: a bootstrap address that came from a
        ``${VAR}`` is named by its place in ``bootstrap.servers`` instead."""
        pv = self.provenance
        if pv.hides("bootstrap.servers") and address in self.bootstrap_servers:
            return (
                f"{pv.name('bootstrap.servers')} entry {self.bootstrap_servers.index(address) + 1}"
            )
        return redact_address(address)

    def oauthbearer(self) -> str:
        """oauthbearer returns the token, reading the token file again (tokens rotate)."""
        if self.oauthbearer_token_file is not None:
            try:
                path = self.oauthbearer_token_file
                token = read_text(path, limit=MAX_CONFIG_BYTES, larger="one token").strip()
            except UnreadableFile as e:
                shown = self.show("sasl.oauthbearer.token.file", path)
                if self.provenance.hides("sasl.oauthbearer.token.file"):
                    raise UsageError(f"{shown}: cannot read the token file") from None
                raise UsageError(e.message(path, "sasl.oauthbearer.token.file")) from None
            if not token:
                shown = self.show("sasl.oauthbearer.token.file", str(path))
                raise UsageError(f"{shown}: the token file is empty")
            return token
        if self.oauthbearer_token is None:
            raise UsageError("OAUTHBEARER needs sasl.oauthbearer.token or .token.file")
        return self.oauthbearer_token

    @classmethod
    def from_properties(
        cls, props: Mapping[str, str], provenance: Provenance = NO_PROVENANCE
    ) -> ClientConfig:
        """from_properties validates a Kafka client properties map (see the module doc).

        Messages name a property (with ``file:line`` and the ``${VAR}`` it came from, when
        ``provenance`` knows them), and show its value only when it is neither a secret nor
        from a variable."""
        if not isinstance(props, Mapping):
            raise UsageError(
                f"client properties must be a mapping of str to str, not {type(props).__name__}"
            )
        pv = provenance
        for key, value in props.items():
            if not isinstance(key, str) or not isinstance(value, str):
                shown = repr(key) if isinstance(key, str) and looks_like_property_name(key) else ""
                raise UsageError(
                    f"client property {shown or '(name not shown)'}: names and values must be "
                    f"str, not {type(key).__name__}: {type(value).__name__}"
                )
            if key in _JAVA_ONLY:
                raise UsageError(
                    f"{pv.at(key)}property {key} is not supported by kquota: {_JAVA_ONLY[key]}"
                )
            if key not in ALLOWED_KEYS:
                if looks_like_property_name(key):
                    what = f"unknown client property {key!r}"
                else:
                    # Not spelled like a property: perhaps a password that lost its key.
                    what = (
                        "a client property name that is no property (not shown: it may be a secret)"
                    )
                raise UsageError(f"{pv.at(key)}{what}; allowed: {', '.join(ALLOWED_KEYS)}")
        p = {k: v.strip() for k, v in props.items()}
        protocol = p.get("security.protocol", "PLAINTEXT").upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise UsageError(
                f"{pv.at('security.protocol')}{pv.show('security.protocol', protocol)} "
                f"is not one of {', '.join(SECURITY_PROTOCOLS)}"
            )
        servers = (
            parse_bootstrap_servers(p["bootstrap.servers"], pv) if "bootstrap.servers" in p else ()
        )
        mechanism = p.get("sasl.mechanism", "").upper() or None
        username = p.get("sasl.username") or None
        password = props.get("sasl.password")  # a password may legitimately have spaces
        if "sasl.jaas.config" in p:
            j_user, j_password = parse_jaas_config(p["sasl.jaas.config"], mechanism)
            username = username or j_user
            password = password if password is not None else j_password
        sasl = protocol.startswith("SASL_")
        if sasl:
            mechanism = mechanism or "PLAIN"  # Java's default, too
            if mechanism not in SASL_MECHANISMS:
                raise UsageError(
                    f"{pv.at('sasl.mechanism')}{pv.show('sasl.mechanism', mechanism)} "
                    "is not supported; use one of " + ", ".join(SASL_MECHANISMS)
                )
            if mechanism == "OAUTHBEARER":
                if "sasl.oauthbearer.token" not in p and "sasl.oauthbearer.token.file" not in p:
                    raise UsageError(
                        "sasl.mechanism OAUTHBEARER needs sasl.oauthbearer.token or "
                        "sasl.oauthbearer.token.file"
                    )
            elif username is None or password is None:
                raise UsageError(
                    f"{protocol} with {mechanism} needs sasl.username and sasl.password "
                    "(or a sasl.jaas.config with username and password)"
                )
        identification = p.get("ssl.endpoint.identification.algorithm", "https").lower()
        if identification not in ("https", "none", ""):
            key = "ssl.endpoint.identification.algorithm"
            shown = pv.name(key) if pv.hides(key) else f"{key} {identification!r}"
            raise UsageError(f"{pv.at(key)}{shown}: must be https, none or empty")
        return cls(
            bootstrap_servers=servers,
            security_protocol=protocol,
            sasl_mechanism=mechanism if sasl else None,
            sasl_username=username,
            sasl_password=password,
            oauthbearer_token=p.get("sasl.oauthbearer.token") or None,
            oauthbearer_token_file=_path(p, "sasl.oauthbearer.token.file"),
            ssl_ca_location=_path(p, "ssl.ca.location"),
            ssl_certificate_location=_path(p, "ssl.certificate.location"),
            ssl_key_location=_path(p, "ssl.key.location"),
            ssl_key_password=props.get("ssl.key.password"),
            ssl_check_hostname=identification == "https",
            client_id=p.get("client.id", "kquota") or "kquota",
            request_timeout_ms=_int(p, "request.timeout.ms", 30_000, 1, pv),
            retries=_int(p, "retries", 5, 0, pv),
            retry_backoff_ms=_int(p, "retry.backoff.ms", 100, 0, pv),
            provenance=pv,
        )


def _property_of(field_name: str) -> str:
    """_property_of is the client property a ClientConfig field comes from."""
    if field_name.startswith("oauthbearer_"):
        field_name = "sasl_" + field_name
    return field_name.replace("_", ".")


def _path(p: Mapping[str, str], key: str) -> Path | None:
    value = p.get(key)
    return Path(value).expanduser() if value else None


_JAVA_INT_MAX = 2_147_483_647  # Java's int: what a Java client's file may hold (retries)


def _int(p: Mapping[str, str], key: str, default: int, minimum: int, pv: Provenance) -> int:
    if key not in p:
        return default
    maximum = _JAVA_INT_MAX
    allowed = f"a whole number from {minimum} to {maximum}"
    try:
        value = int(p[key])
    except ValueError:
        raise UsageError(f"{pv.at(key)}{pv.show(key, p[key])}: must be {allowed}") from None
    if not minimum <= value <= maximum:
        raise UsageError(f"{pv.at(key)}{pv.show(key, value)}: must be {allowed}")
    return value


def parse_bootstrap_servers(text: str, provenance: Provenance = NO_PROVENANCE) -> tuple[str, ...]:
    """parse_bootstrap_servers splits ``host:port,...`` and checks each port."""
    pv = provenance
    servers = tuple(s.strip() for s in text.split(",") if s.strip())
    if not servers:
        raise UsageError(f"{pv.at('bootstrap.servers')}{pv.name('bootstrap.servers')} is empty")
    for i, server in enumerate(servers, 1):
        if pv.hides("bootstrap.servers"):
            shown = f"{pv.name('bootstrap.servers')} entry {i}"
        else:
            shown = f"bootstrap server {redact_address(server)!r}"
        split_host_port(server, f"{pv.at('bootstrap.servers')}{shown}")
    return servers


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+._-]*)://")


def redact_address(server: str) -> str:
    """redact_address hides the user information of an address (``user:pw@``) as ``***@``."""
    at = server.rfind("@")
    if at < 0:
        return server
    scheme = _SCHEME.match(server)
    start = scheme.end() if scheme else 0
    return f"{server[:start]}{MASK}{server[at:]}"


def split_host_port(server: str, shown: str | None = None) -> tuple[str, int]:
    """split_host_port reads ``host:port`` or ``[v6]:port``; ``shown`` is how a message
    names the address (default: the address itself, user information masked)."""
    said = shown or f"bootstrap server {redact_address(server)!r}"
    if "@" in server:
        raise UsageError(
            f"{said} holds user information (user:password@): kquota refuses credentials in "
            "an address; give them as sasl.username and sasl.password in --command-config or "
            "kquota.yaml"
        )
    scheme = _SCHEME.match(server)
    if scheme:
        raise UsageError(
            f"{said} is not host:port: leave out {scheme.group(1)}:// (the protocol is "
            "security.protocol)"
        )
    host, sep, port = server.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"{said} is not host:port (port 1 to 65535)")
    return host.strip("[]"), int(port)


_JAAS_TOKEN = re.compile(r'\s*(?:(;)|"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=))', re.DOTALL)


def parse_jaas_config(text: str, mechanism: str | None) -> tuple[str | None, str | None]:
    """parse_jaas_config reads username/password out of one JAAS login-module line.

    ``<LoginModule> <flag> key=value key="quoted \\" value";`` as Java's JaasConfig reads it.
    Errors name the problem, never the line (it carries a password).
    """
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _JAAS_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise UsageError("sasl.jaas.config is not a valid JAAS login-module line")
        pos = m.end()
        if m.group(1):
            tokens.append((";", ";"))
        elif m.group(2) is not None:
            tokens.append(("str", re.sub(r"\\(.)", r"\1", m.group(2))))
        elif m.group(3):
            tokens.append(("word", m.group(3)))
        else:
            tokens.append(("=", "="))
    if len(tokens) < 2 or tokens[0][0] != "word" or tokens[1][1] not in _JAAS_FLAGS:
        raise UsageError(
            "sasl.jaas.config must start with a login module and a control flag, e.g. "
            "org.apache.kafka.common.security.scram.ScramLoginModule required ...;"
        )
    module = tokens[0][1]
    if module not in _JAAS_MODULES:
        raise UsageError(
            f"sasl.jaas.config login module {module} is not supported; kquota reads "
            + " and ".join(_JAAS_MODULES)
            + " (for OAUTHBEARER use sasl.oauthbearer.token or sasl.oauthbearer.token.file)"
        )
    if mechanism is not None and mechanism not in _JAAS_MODULES[module]:
        raise UsageError(f"sasl.jaas.config uses {module}, which does not serve {mechanism}")
    options: dict[str, str] = {}
    rest = tokens[2:]
    i = 0
    while i < len(rest):
        kind, value = rest[i]
        if kind == ";":
            i += 1
            continue
        if (
            kind != "word"
            or i + 2 >= len(rest)
            or rest[i + 1][0] != "="
            or rest[i + 2][0] not in ("word", "str")
        ):
            raise UsageError("sasl.jaas.config options must be key=value pairs")
        options[value] = rest[i + 2][1]
        i += 3
    return options.get("username"), options.get("password")
