"""describe/alter command parsing, local validation and output formatting (no broker)."""

from __future__ import annotations

import pytest

from kquota.cli.alter import parse_adds
from kquota.cli.connect_options import parse_entity_flags
from kquota.cli.main import main
from kquota.display import number
from kquota.errors import UsageError
from kquota.model import Entity
from kquota.quotakeys import alteration_problems as local_problems
from kquota.render.describe import render_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1048576.0, "1048576"),
        (12.5, "12.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e-7, "1e-07"),
        (1e300, "1e+300"),
        (9.2233720368547758e18, "9.223372036854776e+18"),
        (5e-324, "5e-324"),
    ],
)
def test_format_value(value: float, text: str) -> None:
    assert number(value, long_range=True) == text


def test_describe_text_escapes_terminal_controls() -> None:
    state = {Entity.of({"user": "a\x1b[31m\nb\\c\u2028\x7f"}): {"request_percentage": 1.0}}
    assert (
        render_text(state) == "{user=a\\x1b[31m\\x0ab\\\\c\\u2028\\x7f}\n  request_percentage=1\n"
    )
    assert render_text({Entity.of({"user": "ünïcode ok"}): {}}) == "{user=ünïcode ok}\n"


def test_describe_text_never_prints_two_entities_alike() -> None:
    # The default entity, a user literally named <default>, and names whose characters
    # could forge the {type=name, ...} structure each print distinctly.
    forged = Entity.of({"user": "u=1,client-id=evil"})
    real = Entity.of({"user": "u=1", "client-id": "evil"})
    state = {
        Entity.of({"user": None}): {"request_percentage": 1.0},
        Entity.of({"user": "<default>"}): {"request_percentage": 2.0},
        forged: {"request_percentage": 3.0},
        real: {"request_percentage": 4.0},
        Entity.of({"user": 'q"}'}): {"request_percentage": 5.0},
        Entity.of({"user": " pad"}): {"request_percentage": 6.0},
    }
    heads = [line for line in render_text(state).splitlines() if not line.startswith("  ")]
    assert len(set(heads)) == len(state)
    assert "{user=<default>}" in heads
    assert '{user="<default>"}' in heads
    assert '{user="u=1,client-id=evil"}' in heads
    assert '{user="u=1", client-id=evil}' in heads
    assert '{user="q\\"}"}' in heads
    assert '{user=" pad"}' in heads


def test_render_text_order_and_defaults() -> None:
    state = {
        Entity.of({"user": "b"}): {"producer_byte_rate": 2.0},
        Entity.of({"user": None, "client-id": "x"}): {
            "request_percentage": 1.5,
            "consumer_byte_rate": 3.0,
        },
    }
    assert render_text(state) == (
        "{user=<default>, client-id=x}\n  consumer_byte_rate=3\n  request_percentage=1.5\n"
        "{user=b}\n  producer_byte_rate=2\n"
    )


def test_parse_entity_flags() -> None:
    assert parse_entity_flags(("user=a\\,b,client-id=x=y",), ("ip",)) == {
        "user": "a,b",
        "client-id": "x=y",
        "ip": None,
    }
    with pytest.raises(UsageError, match="more than once"):
        parse_entity_flags(("user=a",), ("user",))
    with pytest.raises(UsageError, match="TYPE=NAME"):
        parse_entity_flags(("user",), ())


def test_parse_adds() -> None:
    assert parse_adds(("producer_byte_rate=1e6, request_percentage=2.5",)) == {
        "producer_byte_rate": 1e6,
        "request_percentage": 2.5,
    }
    with pytest.raises(UsageError, match="not a number"):
        parse_adds(("producer_byte_rate=fast",))


@pytest.mark.parametrize(
    ("parts", "adds", "deletes", "problem"),
    [
        ({"user": "a"}, {"producer_byte_rate": 1.5}, [], "must be a whole number"),
        ({"user": "a"}, {"producer_byte_rate": 0.0}, [], "greater than 0"),
        ({"user": "a"}, {"request_percentage": float("nan")}, [], "NaN"),
        ({"user": "a"}, {"request_percentage": float("inf")}, [], "infinity"),
        ({"user": "a"}, {"connection_creation_rate": 5.0}, [], "not a quota key for this entity"),
        ({"ip": "1.2.3.4"}, {"connection_creation_rate": 2.0**31}, [], "at most 2147483647"),
        ({"ip": "1.2.3.4", "user": "a"}, {"producer_byte_rate": 1.0}, [], "cannot be combined"),
        (
            {"user": None, "client-id": "c" * 32768},
            {"producer_byte_rate": 1.0},
            [],
            "the client-id name is 32768 bytes in UTF-8, longer than the protocol allows",
        ),
        (
            {"user": "a"},
            {"producer_byte_rate": 1.0},
            ["producer_byte_rate"],
            "both added and deleted",
        ),
    ],
)
def test_local_problems(
    parts: dict[str, str | None], adds: dict[str, float], deletes: list[str], problem: str
) -> None:
    problems = local_problems(Entity.of(parts), adds, deletes)
    assert any(problem in p for p in problems), problems


def test_unknown_entity_types_are_left_to_the_broker() -> None:
    assert local_problems(Entity.of({"foo": "bar"}), {"whatever": -1.0}, []) == []


def test_local_validation_sends_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # Port 1 is closed: a connection attempt would be a connection error, not this message.
    with pytest.raises(SystemExit) as e:
        main(["alter", "--bootstrap-server", "127.0.0.1:1", "--names", "user=a",
              "--add", "producer_byte_rate=1.5"])  # fmt: skip
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert "nothing sent" in err and "must be a whole number" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["alter", "--bootstrap-server", "h:1", "--add", "producer_byte_rate=1"],
            "name the entity",
        ),
        (["alter", "--bootstrap-server", "h:1", "--names", "user=a"], "nothing to alter"),
        (["describe"], "where is the cluster? give --bootstrap-server HOST:PORT or --cluster NAME"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 1
    assert message in capsys.readouterr().err


def test_commands_are_registered() -> None:
    from kquota.cli.main import _COMMANDS

    assert _COMMANDS["describe"] == "kquota.cli.describe"
    assert _COMMANDS["alter"] == "kquota.cli.alter"
