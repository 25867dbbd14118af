"""The ``relay`` command line."""
