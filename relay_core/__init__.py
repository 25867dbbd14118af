"""Relay's domain: services, the storage and bridge ports and their adapters, the hub."""
