"""The SDK's methods are what the generator writes from the contract, and say so."""

from __future__ import annotations

from relay_client import _generate


def test_the_generated_methods_are_up_to_date() -> None:
    """Run ``python -m relay_client._generate`` after changing relay_api.operations."""
    written = _generate.TARGET.read_text()
    assert written.startswith(_generate.HEADER)
    assert written == _generate.source()


def test_every_operation_has_a_generated_method_but_those_written_by_hand() -> None:
    text = _generate.TARGET.read_text()
    for name, op in _generate.OPERATION_NAMES.items():
        assert (f"ops.{name}," in text or f"ops.{name})" in text) != (op.id in _generate.BY_HAND)
