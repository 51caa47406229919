"""The environment readers (mnemosyne.project.env): what they accept, their defaults, their errors."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from mnemosyne.project.env import envbool, envchoice, envint, envlist

VAR = "MNEMOSYNE_TEST_SETTING"


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)


# envbool


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        (" on ", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
    ],
)
def test_envbool_reads_the_usual_spellings(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envbool(VAR, not expected) is expected


@pytest.mark.parametrize("raw", ["", "  "])
@pytest.mark.parametrize("default", [True, False])
def test_a_blank_value_reads_as_the_default_for_every_reader(
    monkeypatch: pytest.MonkeyPatch, raw: str, default: bool
) -> None:
    # An empty MCP_REQUIRE_AUTH= once read as false and switched authentication off.
    monkeypatch.setenv(VAR, raw)
    assert envbool(VAR, default) is default
    assert envchoice(VAR, "plain", ("plain", "json")) == "plain"
    assert envlist(VAR, ["a"]) == ["a"]


@pytest.mark.parametrize("default", [True, False])
@pytest.mark.usefixtures("unset")
def test_envbool_falls_back_to_the_default_when_unset(default: bool) -> None:
    assert envbool(VAR, default) is default


@pytest.mark.parametrize("raw", ["maybe", "2", "truee", "y es"])
def test_envbool_rejects_a_value_it_cannot_read_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(ImproperlyConfigured, match=VAR) as excinfo:
        envbool(VAR, True)
    assert repr(raw) in str(excinfo.value)


# envint


@pytest.mark.parametrize(("raw", "expected"), [("42", 42), (" 7 ", 7), ("-3", -3), ("0", 0)])
def test_envint_reads_an_integer(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envint(VAR, 99) == expected


@pytest.mark.usefixtures("unset")
def test_envint_falls_back_to_the_default_when_unset() -> None:
    assert envint(VAR, 99, minimum=1, maximum=100) == 99


@pytest.mark.parametrize("raw", ["", "   "])
def test_envint_treats_a_blank_value_as_unset(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envint(VAR, 99) == 99


@pytest.mark.parametrize("raw", ["1", "100"])
def test_envint_accepts_the_bounds_themselves(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envint(VAR, 50, minimum=1, maximum=100) == int(raw)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "must be an integer"),
        ("1.5", "must be an integer"),
        ("0", "at least 1"),
        ("101", "at most 100"),
    ],
)
def test_envint_rejects_a_bad_value_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str, message: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(ImproperlyConfigured, match=VAR) as excinfo:
        envint(VAR, 50, minimum=1, maximum=100)
    assert message in str(excinfo.value)


# envchoice


@pytest.mark.parametrize(("raw", "expected"), [("s3", "s3"), ("S3", "s3"), (" filesystem ", "filesystem")])
def test_envchoice_reads_a_choice_case_insensitively(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envchoice(VAR, "filesystem", ("filesystem", "s3")) == expected


@pytest.mark.usefixtures("unset")
def test_envchoice_falls_back_to_the_default_when_unset() -> None:
    assert envchoice(VAR, "filesystem", ("filesystem", "s3")) == "filesystem"


@pytest.mark.parametrize("raw", ["ftp", "s3 filesystem"])
def test_envchoice_rejects_an_unknown_choice_naming_the_variable_and_the_choices(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(ImproperlyConfigured, match=VAR) as excinfo:
        envchoice(VAR, "filesystem", ("filesystem", "s3"))
    assert "filesystem, s3" in str(excinfo.value)


# envlist


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a", ["a"]),
        ("a,b", ["a", "b"]),
        (" a , b ,, c ,", ["a", "b", "c"]),
        ("", ["default"]),
        (" , ", []),
    ],
)
def test_envlist_splits_on_commas_and_drops_blanks(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: list[str]
) -> None:
    monkeypatch.setenv(VAR, raw)
    assert envlist(VAR, ["default"]) == expected


@pytest.mark.usefixtures("unset")
def test_envlist_falls_back_to_the_default_when_unset() -> None:
    assert envlist(VAR, ["x", "y"]) == ["x", "y"]
