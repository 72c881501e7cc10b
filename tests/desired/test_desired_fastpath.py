"""The fast reader must give exactly the composer's nodes, or decline.

Hypothesis writes canonical-looking files from awkward tokens (YAML 1.1 booleans, octal,
``1e3``, ``~``, quoted forms, odd spacing, comments) and checks: whenever
:func:`parse_canonical` accepts a file, libyaml accepts it too and composes equal nodes.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.desired.fastpath import parse_canonical
from kquota.desired.nodes import MapNode, compose

# Tokens the fast reader takes (still awkward for YAML 1.1), and ones it must decline.
SAFE = [
    "alice",
    "<default>",
    "client-id",
    "user",
    "ip",
    "yes",
    "No",
    "on",
    "~",
    "null",
    "010",
    "0x1F",
    "1_000",
    "1e3",
    "1.0e+3",
    ".nan",
    ".5",
    "+7",
    "1.5MiB",
    "10MiB",
    "a.b",
    "a-b",
    "a@b",
    "a=b",
    "<<",
    "x~y",
    "'q'",
    '"q"',
    "''",
    '""',
    '"#x"',
    "'a: b'",
    "a#b",
    "203.0.113.7",
    "2001-12-14",
    "0o17",
    "1:30",
]
RISKY = ["'it''s'", '"a\\tb"', "-1", "-.inf", "@x", "2001:db8::1", "a b", "!x", "&a", "*a", "="]
# One token in twenty is risky, so most generated files still take the fast path.
token = st.integers(0, 19).flatmap(lambda i: st.sampled_from(RISKY if i == 0 else SAFE))
space = st.sampled_from(["", " ", "  "])


@st.composite
def flow(draw: st.DrawFn) -> str:
    pairs = draw(st.lists(st.tuples(token, token), max_size=3))
    sp = draw(space)
    inner = (draw(st.sampled_from([",", ", ", " , "]))).join(f"{k}: {v}" for k, v in pairs)
    return "{" + sp + inner + sp + "}"


@st.composite
def document(draw: st.DrawFn) -> str:
    indent = " " * draw(st.sampled_from([0, 2, 4]))
    lines = ["apiVersion: kquota/v1", f"kind: {draw(token)}"]
    if draw(st.booleans()):
        lines.append("# a comment")
    lines.append("quotas:" + draw(st.sampled_from(["", "  # c"])))
    for _ in range(draw(st.integers(0, 3))):
        first = draw(st.sampled_from(["match", "set", "profile", "x"]))
        value = draw(st.one_of(flow(), token))
        lines.append(f"{indent}- {first}: {value}{draw(st.sampled_from(['', ' # c', '  ']))}")
        for _ in range(draw(st.integers(0, 2))):
            key = draw(st.sampled_from(["match", "set", "profile"]))
            lines.append(f"{indent}  {key}: {draw(st.one_of(flow(), token))}")
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "   ", "  # note"])))
    if draw(st.booleans()):
        lines.append(f"profiles: {draw(token)}")
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@settings(max_examples=600, deadline=None)
@given(document())
def test_desired_fastpath_equals_composer(text: str) -> None:
    fast = parse_canonical(text)
    if fast is None:
        return
    assert fast == compose(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n---\nb: 2\n",  # documents
        "a: &x 1\n",  # anchors
        "a: !!str 1\n",  # tags
        "quotas:\n  - match:\n      user: x\n",  # block-nested mapping
        'quotas:\n  - match: {user: "a\\tb"}\n',  # escapes
        "quotas:\n  - match: {user: a b}\n",  # spaces in plain scalars
        "quotas:\n  - match: {ip: 2001:db8::1}\n",  # colons in plain scalars
        "quotas:\n- a: 1\n  - b: 2\n",  # odd indentation
        "quotas:\n",  # null value
        "\ufeffa: 1\n",  # byte order mark
        "a: 1\r",  # old Mac line ends
        "a: 1\x85b: 2\n",  # YAML 1.1 line break
    ],
)
def test_desired_fastpath_declines(text: str) -> None:
    assert parse_canonical(text) is None


def test_desired_fastpath_positions() -> None:
    root = parse_canonical(
        "# c\napiVersion: kquota/v1\nquotas:\n  - match: {user: alice}\n    set: {a: 1}\n"
    )
    assert isinstance(root, MapNode)
    assert (root.line, root.col) == (2, 1)
    seq = root.pairs[1][1]
    assert (seq.line, seq.col) == (4, 3)
    assert root == compose(
        b"# c\napiVersion: kquota/v1\nquotas:\n  - match: {user: alice}\n    set: {a: 1}\n"
    )
