"""Email: SMTP out (``sending``), with one-click decision links (``links``) that the console's
decision page takes back in (``receiving``)."""

from relay_server.bridges.email.sending import EmailBridge

__all__ = ["EmailBridge"]
