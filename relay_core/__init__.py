"""Relay's domain: models, errors, services and the storage and bridge ports."""

__version__ = "0.1.0"
