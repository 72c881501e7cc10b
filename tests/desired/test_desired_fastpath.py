"""The fast readers must give exactly the composer's nodes, or decline.

Hypothesis writes canonical-looking files from awkward tokens (YAML 1.1 booleans, octal,
``1e3``, ``~``, quoted forms, odd spacing, comments) and checks: whenever
:func:`parse_canonical` accepts a file, libyaml accepts it too and composes equal nodes.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.desired import scan
from kquota.desired.document import ParsedEntry, ParsedFile, _Walker, read_document
from kquota.desired.fastpath import parse_canonical, plain_lines
from kquota.desired.nodes import MapNode, Node, Scalar, SeqNode, compose
from kquota.desired.problems import Problem, Problems
from kquota.desired.reader import read_file
from kquota.desired.scan import EntryLine, scan_canonical

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


# The whole-file scanner (kquota.desired.scan) reads the tightest canonical form; wherever
# it accepts a file its nodes must be the line reader's and the composer's, and reading a
# file through it (entries validated as they stream) must give what the full path gives.


def scanned(text: str) -> Node | None:
    plain = plain_lines(text)
    return None if plain is None else scan_canonical(plain)


def composed(text: str) -> Node | None | Exception:
    try:
        return compose(text.encode())
    except yaml.YAMLError as e:
        return e


def full_path(text: str) -> tuple[ParsedFile | None, list[Problem]]:
    problems = Problems()
    root = composed(text)
    if isinstance(root, Exception):
        return None, []  # not YAML: only the full path reads it, so nothing to compare
    return read_document("f.yaml", root, problems), sorted(problems.items)


def fast_path(text: str) -> tuple[ParsedFile | None, list[Problem]]:
    problems = Problems()
    parsed = read_file("f.yaml", text.encode(), problems)
    return parsed, sorted(problems.items)


def _decline_lines(lines: list[EntryLine]) -> bool:
    return False  # so that every entry read as lines is made into nodes


def assert_scanner_agrees(text: str) -> None:
    fast = scanned(text)
    if fast is not None:
        assert fast == composed(text)
        line_read = parse_canonical(text)  # the line reader takes no one-line flow entries
        assert line_read is None or fast == line_read
        for as_lines in (False, True):  # entries read as nodes, or as lines then nodes
            streamed: list[MapNode] = []
            root = scan_canonical(
                text, streamed.append, take_entry_lines=_decline_lines if as_lines else None
            )
            if root is not None:  # streaming may decline more (a duplicate quotas key)
                assert isinstance(root, MapNode)
                for key, value in root.pairs:
                    if isinstance(value, SeqNode) and not value.items and streamed:
                        assert isinstance(key, Scalar) and key.value == "quotas"
                        value.items.extend(streamed)
                        streamed = []
                assert root == fast
    expected = full_path(text)
    if expected[0] is not None:
        assert fast_path(text) == expected


@settings(max_examples=600, deadline=None)
@given(document())
def test_desired_scanner_equals_composer(text: str) -> None:
    assert_scanner_agrees(text)


@st.composite
def exported(draw: st.DrawFn) -> str:
    """exported writes what ``kquota export`` writes, from awkward names and values."""
    lines = ["# header", "apiVersion: kquota/v1", "kind: ClientQuotas"]
    if draw(st.booleans()):  # profiles, one a line or each a block mapping
        lines.append("profiles:")
        for name in draw(st.lists(token, max_size=3)):
            keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=3))
            values = ", ".join(f"{k}: {draw(st.sampled_from(VALUES))}" for k in keys)
            if draw(st.booleans()):
                lines.append(f"  {name}: {{{values}}}")
            else:
                nested = " " * draw(st.sampled_from([3, 4, 6]))
                lines.append(f"  {name}:" + draw(st.sampled_from(["", "  # c"])))
                lines += [f"{nested}{pair}" for pair in values.split(", ")]
    lines.append("quotas:")
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["  # users", "", "  # ip addresses"])))
        types = draw(st.sampled_from([["user"], ["user", "client-id"], ["client-id"], ["ip"]]))
        match = ", ".join(f"{t}: {draw(token)}" for t in types)
        keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=4))
        values = ", ".join(f"{k}: {draw(st.sampled_from(VALUES))}" for k in keys)
        second = draw(st.sampled_from(["set", "set", "profile"]))
        form = draw(st.sampled_from(["export", "line", "block"]))
        if form == "export":
            lines.append(f"  - match: {{{match}}}")
            lines.append(f"    {second}: {{{values}}}")
            if draw(st.booleans()):
                lines.append(f"    profile: {draw(token)}")
        elif form == "block":  # match: and set: on lines of their own, one key a line
            nested = " " * draw(st.sampled_from([5, 6, 8]))
            lines.append("  - match:" + draw(st.sampled_from(["", "  # c"])))
            lines += [f"{nested}{pair}" for pair in match.split(", ")]
            lines.append(f"    {second}:")
            lines += [f"{nested}{pair}" for pair in values.split(", ")]
        else:  # a whole entry on one line, as people write it too
            lines.append(f"  - {{match: {{{match}}}, {second}: {{{values}}}}}")
    return "\n".join(lines) + "\n"


KEYS = ["producer_byte_rate", "consumer_byte_rate", "request_percentage", "x", "'set'"]
VALUES = [
    "1048576",
    "10MiB",
    "1.5",
    "1e3",
    "010",
    "yes",
    "~",
    "0",
    "-1",
    '"5"',
    "1.0e+300",
    "10 MiB",
    "1024 KiB/s",
    "2001-12-14 21:59:43",
    "a b  c",
]


@settings(max_examples=400, deadline=None)
@given(exported())
def test_desired_scanner_reads_exported_files(text: str) -> None:
    assert_scanner_agrees(text)


MUTATIONS = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.sampled_from(["insert", "delete", "replace"]),
        st.sampled_from(list(" -:,{}#'\"\n\tab1<>~&*!|") + ["\r\n", "\u2028", "\x85"]),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=800, deadline=None)
@given(exported(), MUTATIONS)
def test_desired_scanner_mutated_files_agree_or_decline(
    text: str, mutations: list[tuple[int, str, str]]
) -> None:
    for at, op, ch in mutations:
        i = at % (len(text) + 1)
        if op == "insert":
            text = text[:i] + ch + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + ch + text[i + 1 :]
    assert_scanner_agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "quotas:\n  - match: {user: a}\n",  # the one accepted here
        "quotas:\n  - match: {user: a}",  # no final newline
        "quotas:\n  - match: {user:  a}\n",  # two spaces
        "quotas:\n  - match: {user: a,b: c}\n",  # no space after the comma
        "quotas:\n  - match: {}\n",  # empty flow mapping
        "quotas:\n  - match: {a: 1, b: 2, c: 3, d: 4, e: 5}\n",  # five pairs
        "profiles:\n  gold:\n    a:\n      b: 1\n",  # block mappings three levels deep
        "profiles:\n  gold:\n    a: 1\n  silver:\n",  # a key with nothing below it (null)
        "profiles:\n  gold:\n      a: 1\n    b: 2\n",  # uneven keys in a profile
        "profiles:\n  gold:\n    - a\n",  # a list below a profile
        "quotas:\n  - match:\n      user:\n        name: a\n",  # two levels in an entry
        "quotas:\n  - match:\n    set: {a: 1}\n",  # a key with nothing below it (null)
        "quotas:\n  - match:\n      user: a\n     client-id: b\n",  # uneven block keys
        'quotas:\n  - match: {user: "a" b}\n',  # a word after a quoted scalar
        "quotas:\n  - {match: {user: a}}\n",  # a flow entry of one key
        "quotas:\n  - {match: {user: a}, set: {b: 1}}\n    profile: x\n",  # then a block key
        "quotas:\n  - {match: {user: a},set: {b: 1}}\n",  # no space after the comma
    ],
)
def test_desired_scanner_declines_or_agrees(text: str) -> None:
    assert_scanner_agrees(text)
    if text != "quotas:\n  - match: {user: a}\n":
        assert scanned(text) is None


def test_desired_scanner_reads_one_line_entries_with_the_composers_positions() -> None:
    text = (
        "quotas:\n"
        '  - {match: {user: "a b", client-id: c}, set: {producer_byte_rate: 10MiB}}  # note\n'
        "  - match: {ip: 10.0.0.1}\n"
        "    set: {connection_creation_rate: 5}\n"
        "  - {match: {user: d}, profile: {x: gold}}\n"
    )
    root = scanned(text)
    assert root is not None and root == composed(text)
    assert isinstance(root, MapNode) and isinstance(root.pairs[0][1], SeqNode)
    first = root.pairs[0][1].items[0]
    assert isinstance(first, MapNode) and (first.line, first.col) == (2, 5)
    assert [(k.col, v.col) for k, v in first.pairs] == [(6, 13), (42, 47)]  # type: ignore[attr-defined]
    assert_scanner_agrees(text)


def test_desired_scanner_streams_duplicate_quotas_not_at_all() -> None:
    # The second list must never be validated (the walker reports the duplicate key and
    # skips it), so a streaming scan declines and the whole file takes the full path.
    seen: list[MapNode] = []
    text = "quotas:\n  - match: {user: a}\nquotas:\n  - match: {user: b}\n"
    assert scan_canonical(text) is not None
    assert scan_canonical(text, seen.append) is None
    assert_scanner_agrees(text)


def test_plainly_valid_one_line_entries_are_taken_without_nodes_and_read_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # DocumentReader.flow_entry takes the plainly valid one-line entries from the scanner's
    # groups; everything else must come back to the walker. Either way: the full path's result.
    lines = [
        ("{match: {user: alice}, set: {producer_byte_rate: 1048576}}", True),
        ('{set: {request_percentage: 50.5}, match: {user: "bob", client-id: app-1}}', True),
        ("{match: {client-id: c}, set: {consumer_byte_rate: 10MiB}}", True),
        ("{match: {user: alice}, set: {producer_byte_rate: 2}}", True),  # a duplicate entity
        ("{match: {ip: 10.0.0.1}, set: {connection_creation_rate: 5}}", True),
        ('{match: {ip: "10.0.0.01"}, set: {connection_creation_rate: 5}}', False),
        ('{match: {user: "<default>"}, set: {producer_byte_rate: 1}}', False),
        ("{match: {user: ~}, set: {producer_byte_rate: 1}}", False),
        ('{match: {user: " pad"}, set: {producer_byte_rate: 1}}', False),  # a warning
        ('{match: {user: "é"}, set: {producer_byte_rate: 1}}', False),  # non-ASCII
        ("{match: {user: a, user: b}, set: {producer_byte_rate: 1}}", False),
        ("{match: {user: a}, set: {connection_creation_rate: 1}}", False),  # an ip key
        ("{match: {user: a}, set: {producer_byte_rate: 1, producer_byte_rate: 2}}", False),
        ("{match: {user: a}, set: {producer_byte_rate: 0}}", False),
        ("{match: {user: a}, set: {producer_byte_rate: yes}}", False),
        ("{match: {user: a}, profile: {x: gold}}", False),
    ]
    text = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n" + "".join(
        f"  - {entry}\n" for entry, _ in lines
    )
    taken: list[bool] = []
    from kquota.desired.document import DocumentReader

    flow_entry = DocumentReader.flow_entry

    def recorded(self: DocumentReader, *args: object) -> bool:
        took = flow_entry(self, *args)  # type: ignore[arg-type]
        taken.append(took)
        return took

    monkeypatch.setattr(DocumentReader, "flow_entry", recorded)
    assert scanned(text) is not None  # the whole file is the scanner's
    assert fast_path(text) == full_path(text)
    assert taken == [took for _, took in lines]
    parsed, problems = fast_path(text)
    assert parsed is not None and problems  # the bad entries were reported, by the walker
    first = parsed.entries[0]
    assert (first.at.line, first.at.column) == (4, 5)


def test_plainly_valid_export_shaped_entries_skip_the_walker_and_read_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The two-line form `kquota export` writes: DocumentReader takes the plainly valid ones
    # from their nodes without the walker; the result is the full path's either way.
    entries = [
        ("match: {user: alice}", "set: {producer_byte_rate: 1048576}", True),
        ("set: {request_percentage: 50.5}", 'match: {user: "bob", client-id: app-1}', True),
        ("match: {client-id: c}", "set: {consumer_byte_rate: 10MiB}", True),
        ("match: {ip: 10.0.0.1}", "set: {connection_creation_rate: 5}", True),
        ('match: {ip: "2001:db8::1"}', "set: {connection_creation_rate: 5}", True),
        ("match: {ip: 010.0.0.1}", "set: {connection_creation_rate: 5}", False),
        ('match: {ip: "2001:DB8::2"}', "set: {connection_creation_rate: 5}", False),  # spelling
        ('match: {ip: "fe80::1%eth0"}', "set: {connection_creation_rate: 5}", False),
        ("match: {ip: 10.0.0.3, user: a}", "set: {connection_creation_rate: 5}", False),
        ("match: {ip: 10.0.0.4}", "set: {producer_byte_rate: 5}", False),
        ('match: {ip: "<default>"}', "set: {connection_creation_rate: 5}", False),
        ('match: {user: "<default>"}', "set: {producer_byte_rate: 1}", False),
        ('match: {user: " pad"}', "set: {producer_byte_rate: 1}", False),
        ("match: {user: a}", "set: {producer_byte_rate: 1, producer_byte_rate: 2}", False),
        ("match: {user: a}", "set: {request_percentage: yes}", False),
        ("match: {user: a}", "profile: gold", True),  # unknown here: merging says so
        ("match: {user: a}", "profile: gold\n    set: {request_percentage: 5}", True),
        ("match: {user: a}", "profile: gold\n    set: {producer_byte_rate: 0}", False),
        ("match: {user: a}", "profile: gold\n    profile: gold", False),
        ("match: {user: a}", "profile: ''", False),
        ("match: {user: a}", "profile: 1", False),
        ("match: {user: a}", "profile: {x: 1}", False),
        (
            "match: {user: a}",
            "set: {producer_byte_rate: 1}\n    profile: gold\n    match: {user: b}",
            False,
        ),
        ("match: {user: a}", "match: {user: b}", False),
        (
            "match: {user: a}",
            "set: {producer_byte_rate: 1}\n    set: {consumer_byte_rate: 1}",
            False,
        ),
    ]
    text = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
    text += "".join(f"  - {first}\n    {second}\n" for first, second, _ in entries)
    taken: list[bool] = []
    from kquota.desired.document import DocumentReader

    entry_lines, block_entry = DocumentReader.entry_lines, DocumentReader._block_entry
    from_nodes: list[bool] = []

    def recorded(self: DocumentReader, lines: list[EntryLine]) -> bool:
        took = entry_lines(self, lines)
        taken.append(took)
        return took

    def recorded_nodes(self: DocumentReader, node: MapNode) -> bool:
        took = block_entry(self, node)
        from_nodes.append(took)
        return took

    monkeypatch.setattr(DocumentReader, "entry_lines", recorded)
    monkeypatch.setattr(DocumentReader, "_block_entry", recorded_nodes)
    assert scanned(text) is not None
    assert fast_path(text) == full_path(text)
    assert taken == [took for _, _, took in entries]
    # What the lines decline, the nodes of the same entry decline too (then the walker).
    assert from_nodes == [False] * taken.count(False)
    # Read from nodes (not streamed as lines), the entries are taken alike.
    monkeypatch.setattr(DocumentReader, "entry_lines", lambda self, lines: False)
    from_nodes.clear()
    assert fast_path(text) == full_path(text)
    assert from_nodes == taken
    parsed, problems = fast_path(text)
    assert parsed is not None and problems
    assert (parsed.entries[0].at.line, parsed.entries[0].at.column) == (4, 5)


# The ways people write a desired state (benchmarks/desired_styles.py times each at 100k):
# the scanner reads every one of them whole, and what it reads is the composer's.
_HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\n"
STYLES = {
    "export": _HEAD + "quotas:\n  # users\n  - match: {user: alice, client-id: app}\n"
    "    set: {producer_byte_rate: 10MiB, request_percentage: 150}\n",
    "flow-line": _HEAD + "quotas:\n  - {match: {user: alice}, set: {producer_byte_rate: 1}}\n"
    "  - {match: {ip: 10.0.0.1}, set: {connection_creation_rate: 5}}\n",
    "flow-double": _HEAD + 'quotas:\n  - match: {user: "svc-1", client-id: "app-1"}\n'
    "    set: {consumer_byte_rate: 2048}\n",
    "flow-single": _HEAD + "quotas:\n  - match: {user: 'svc-1', client-id: 'app-1'}\n"
    "    set: {consumer_byte_rate: 2048}\n",
    "block": _HEAD + "quotas:\n  - match:\n      user: alice\n      client-id: app\n"
    "    set:\n      producer_byte_rate: 1048576\n      request_percentage: 150\n"
    "  - match:\n        ip: 10.0.0.1\n    set:\n        connection_creation_rate: 5\n",
    "units": _HEAD + "quotas:\n  - match: {user: alice}\n"
    "    set: {producer_byte_rate: 1 MiB, consumer_byte_rate: 1048.576KB}\n"
    "  - match: {user: bob}\n    set: {producer_byte_rate: 1024 KiB/s}\n",
    "comments": _HEAD + "quotas:\n  # owner: team-1, ticket QUOTA-1\n"
    "  - match: {user: alice}  # the first\n    set: {producer_byte_rate: 1}  # reviewed\n\n"
    "  # owner: team-2\n  - match: {user: bob}\n    set: {producer_byte_rate: 2}\n",
    "profiles-block": _HEAD + "profiles:\n  gold:\n    producer_byte_rate: 10MiB\n"
    "    consumer_byte_rate: 1\n  silver: {producer_byte_rate: 1MiB}\nquotas:\n"
    "  - match: {user: alice}\n    profile: gold\n"
    "  - match: {user: bob}\n    profile: silver\n    set: {request_percentage: 150}\n",
    "profiles": _HEAD + "profiles:\n  gold: {producer_byte_rate: 10MiB, consumer_byte_rate: 1}\n"
    "  silver: {producer_byte_rate: 1MiB}\nquotas:\n  - match: {user: alice}\n"
    "    profile: gold\n  - match: {user: bob, client-id: app}\n    profile: silver\n"
    "    set: {request_percentage: 150}\n  - match:\n      user: carol\n    set:\n"
    "      producer_byte_rate: 5\n    profile: gold\n",
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_common_style_is_scanned_and_reads_as_the_composer_reads_it(
    style: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = STYLES[style]
    assert scanned(text) is not None, "this style fell off the scanner"
    assert scanned(text) == composed(text)
    walked: list[Node] = []
    entry = _Walker.entry

    def recorded(self: _Walker, node: Node) -> ParsedEntry | None:
        walked.append(node)
        return entry(self, node)

    monkeypatch.setattr(_Walker, "entry", recorded)
    fast = fast_path(text)
    assert walked == [], "a plainly valid entry went to the walker"
    assert fast == full_path(text)  # the composer's nodes, every entry through the walker
    assert len(walked) == len(fast[0].entries) if fast[0] is not None else False
    assert fast[0] is not None and fast[0].entries and fast[1] == []


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(0, 300).map(str), st.sampled_from(["00", "01", "010", "٣", ""])),
        min_size=3,
        max_size=5,
    )
)
def test_canonical_ipv4_shortcut_is_canonical_ip(octets: list[str]) -> None:
    from kquota.desired.document import _CANONICAL_V4
    from kquota.names import canonical_ip

    name = ".".join(octets)
    if _CANONICAL_V4.fullmatch(name) is not None:
        assert canonical_ip(name) == name
    elif len(octets) == 4 and all(o.isascii() and o.isdigit() for o in octets):
        assert canonical_ip(name) != name  # leading zeros or past 255: the long way says no


def test_the_scanner_matches_each_line_where_the_one_before_ends() -> None:
    """A line the scanner's pattern does not take ends the scan, but finditer first looked
    for a match further on, from every position (a line of 20,000 spaces then a stray
    character took 30 s): each line is matched whole where the one before it ends, another
    shape by an alternative of its own, so finditer never searches. The file is still read
    as composed."""
    head = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
    text = head + "  - match: {user:" + " " * 3000 + "a" + " " * 3000 + ",}   \n    set: {x: 1}\n"
    spans = [m.span() for m in scan._LINE.finditer(text)]
    assert [start for start, _ in spans] == [0, *(end for _, end in spans[:-1])]
    assert spans[-1][1] == len(text)
    assert scan_canonical(text) is None
    problems = Problems()
    parsed = read_file("f.yaml", text.encode(), problems)
    root = compose(text.encode())
    assert parsed == read_document("f.yaml", root, expected := Problems())
    assert problems.items == expected.items
