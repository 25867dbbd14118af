"""Settings are read once, from one model: every setting is a RELAY_* variable and, unless it
is a secret, a flag of both entry points; flags win over the environment, part by part."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from relay_cli.main import app
from relay_server import __main__ as server_main
from relay_server.settings import Settings, _Environment, options, settings_from


def test_the_environment_fills_every_part(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELAY_PORT", "9001")
    monkeypatch.setenv("RELAY_RATE_LIMIT", "7")
    monkeypatch.setenv("RELAY_PRESENCE_TTL", "5")
    monkeypatch.setenv("RELAY_TELEGRAM_CHAT_ID", "42")
    monkeypatch.setenv("RELAY_TRUSTED_PROXIES", "10.0.0.0/8, ::1/128")
    monkeypatch.setenv("RELAY_LEASE_SWEEP_SECONDS", "0.5")  # the name it had before
    settings = Settings()
    assert settings.port == 9001 and settings.limits.rate_limit == 7
    assert settings.domain.presence_ttl == 5 and settings.telegram.chat_id == 42
    assert [str(n) for n in settings.http.trusted_proxies] == ["10.0.0.0/8", "::1/128"]
    assert settings.domain.sweep_seconds == 0.5


def test_the_environment_answers_one_field_as_it_answers_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pydantic-settings' per-field question gets what the whole read gives that field."""
    monkeypatch.setenv("RELAY_PORT", "9001")
    monkeypatch.setenv("RELAY_TELEGRAM_CHAT_ID", "42")
    monkeypatch.delenv("RELAY_HOST", raising=False)
    source = _Environment(Settings)
    fields = Settings.model_fields
    assert source.get_field_value(fields["port"], "port") == ("9001", "port", False)
    telegram = source.get_field_value(fields["telegram"], "telegram")
    assert telegram == (source()["telegram"], "telegram", False)
    assert telegram[0]["chat_id"] == "42"
    assert source.get_field_value(fields["host"], "host") == (None, "host", False)


def test_a_flag_wins_over_its_variable_and_keeps_the_rest_of_its_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RELAY_TELEGRAM_CHAT_ID", "42")
    monkeypatch.setenv("RELAY_TELEGRAM_MODE", "poll")
    settings = settings_from({"telegram_mode": "webhook", "port": "9002", "host": None})
    assert settings.telegram.mode == "webhook" and settings.telegram.chat_id == 42
    assert settings.port == 9002 and settings.host == "127.0.0.1"


def test_every_setting_has_a_distinct_variable_and_secrets_have_no_flag() -> None:
    found = options()
    assert len({option.env for option in found}) == len(found)
    secrets = {option.env for option in found if option.secret}
    assert secrets == {
        "RELAY_OPERATOR_TOKEN",
        "RELAY_TELEGRAM_BOT_TOKEN",
        "RELAY_TELEGRAM_WEBHOOK_SECRET",
        "RELAY_SLACK_BOT_TOKEN",
        "RELAY_SLACK_SIGNING_SECRET",
        "RELAY_MATRIX_ACCESS_TOKEN",
        "RELAY_EMAIL_SMTP_PASSWORD",
    }


def test_both_entry_points_offer_the_same_flags(capsys: pytest.CaptureFixture[str]) -> None:
    expected = {option.flag for option in options() if not option.secret}
    cli = CliRunner().invoke(app, ["serve", "--help"], terminal_width=200).stdout
    with pytest.raises(SystemExit):
        server_main.main(["--help"])
    module = capsys.readouterr().out
    for flag in expected:
        assert flag in cli and flag in module, flag
    assert "--operator-token" not in cli and "--operator-token" not in module


@pytest.mark.parametrize("argv", [["serve", "--port", "99999"], ["serve", "--auth", "maybe"]])
def test_a_bad_flag_is_a_clear_error_before_anything_starts(argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
