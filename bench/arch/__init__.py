"""The house's measures of issue #80: ``python -m bench.arch`` prints them."""
