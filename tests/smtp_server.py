"""A real SMTP server on loopback for the tests (aiosmtpd), with STARTTLS or implicit TLS under
a certificate made for it, a login, and every message it accepts kept, parsed."""

from __future__ import annotations

import datetime
import email
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.live import free_port

USER, PASSWORD = "relay", "smtp-password-never-shown"


def certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "smtp-cert.pem", directory / "smtp-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@dataclass
class Mailbox:
    """What the server accepted, and how to reach it."""

    port: int
    ca_file: Path
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        parsed = email.message_from_bytes(envelope.content, policy=default)
        with self.lock:
            self.messages.append(parsed)  # type: ignore[arg-type]
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        if isinstance(data, LoginPassword) and (data.login, data.password) == (
            USER.encode(),
            PASSWORD.encode(),
        ):
            with self.lock:
                self.logins.append(data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    def wait_for(self, count: int, timeout: float = 10) -> list[EmailMessage]:
        """The first ``count`` messages, once that many arrived."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                if len(self.messages) >= count:
                    return list(self.messages[:count])
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.messages)} messages, not {count}")
            time.sleep(0.02)


@contextmanager
def smtp_server(directory: Path, security: str = "starttls") -> Iterator[Mailbox]:
    """An SMTP server on 127.0.0.1 that takes a login (``USER``, ``PASSWORD``) only over TLS:
    STARTTLS on a plain port, or ``tls`` from the first byte."""
    cert_file, key_file = certificate(directory)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    port = free_port()
    box = Mailbox(port, cert_file)
    tls = {"ssl_context": context} if security == "tls" else {"tls_context": context}
    controller = Controller(
        box,
        hostname="127.0.0.1",
        port=port,
        authenticator=box.authenticate,
        # Implicit TLS is TLS from the first byte, which aiosmtpd's check does not see.
        auth_require_tls=security == "starttls",
        require_starttls=security == "starttls",
        **tls,  # type: ignore[arg-type]
    )
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


def relay_env(
    box: Mailbox, to: str = "ops@example.com", public_url: str = "http://public.invalid"
) -> dict[str, str]:
    """The settings (as variables) of a Relay that mails ``to`` through this server."""
    return {
        "RELAY_EMAIL_SMTP_HOST": "127.0.0.1",
        "RELAY_EMAIL_SMTP_PORT": str(box.port),
        "RELAY_EMAIL_SMTP_USERNAME": USER,
        "RELAY_EMAIL_SMTP_PASSWORD": PASSWORD,
        "RELAY_EMAIL_SMTP_CA_FILE": str(box.ca_file),
        "RELAY_EMAIL_SENDER": "relay@example.com",
        "RELAY_EMAIL_TO": to,
        "RELAY_EMAIL_PUBLIC_URL": public_url,
    }


def body_of(message: EmailMessage, subtype: str = "plain") -> str:
    """The message's text (or HTML) part."""
    part = message.get_body(preferencelist=(subtype,))
    assert part is not None, message
    return str(part.get_content()).replace("\r\n", "\n")
