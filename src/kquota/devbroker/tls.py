"""A throwaway PKI for the dev broker's TLS listeners, made with the ``openssl`` command.

One CA; a server certificate for ``localhost`` and ``127.0.0.1`` (so hostname verification
passes on loopback); a client certificate for mutual TLS. Kafka reads PEM directly
(``ssl.keystore.type=PEM``, KIP-651): the server keystore is its key followed by its chain.
For development and tests only: keys are unencrypted and valid for 30 days.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kquota.errors import KquotaError


@dataclass(frozen=True)
class TlsFiles:
    ca_certificate: Path
    server_keystore: Path
    client_certificate: Path
    client_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise KquotaError("TLS listeners need the `openssl` command (apt-get install openssl)")
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise KquotaError(f"openssl {args[0]} failed: {proc.stderr.strip()[-500:]}")


def _issue(name: str, subject: str, extensions: str, cwd: Path) -> None:
    (cwd / f"{name}.ext").write_text(extensions)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.csr", "-subj", subject, cwd=cwd)  # fmt: skip
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "30", "-sha256", "-out", f"{name}.pem",
             "-extfile", f"{name}.ext", cwd=cwd)  # fmt: skip


def make_pki(folder: Path) -> TlsFiles:
    """make_pki writes (or reuses) the CA, server and client material under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(
        folder / "ca.pem",
        folder / "server-keystore.pem",
        folder / "client.pem",
        folder / "client.key",
    )
    if all(p.is_file() for p in (files.ca_certificate, files.server_keystore, files.client_key)):
        return files
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
             "-out", "ca.pem", "-days", "30", "-sha256", "-subj", "/CN=kquota dev-broker CA",
             cwd=folder)  # fmt: skip
    server_ext = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
    _issue("server", "/CN=localhost", server_ext, folder)
    _issue("client", "/CN=kquota-client", "extendedKeyUsage=clientAuth\n", folder)
    files.server_keystore.write_text(
        (folder / "server.key").read_text() + (folder / "server.pem").read_text()
    )
    for p in folder.iterdir():
        p.chmod(0o600)
    return files
