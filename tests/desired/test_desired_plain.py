"""The token reader of plainly valid entries takes only what the field lists take, alike.

:class:`kquota.desired.plain.PlainEntries` reads an entry from the scanner's tokens and
declines anything not plainly valid; :class:`DocumentReader` then reads it from its field
lists (and those decline to the walker). Hypothesis writes entries from awkward tokens in
every form the scanner streams (``kquota export``'s two lines, block mappings, one line,
``profile`` lines) and checks each entry both ways: whenever the tokens give an entry, the
field lists take it too and give an equal one.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.desired.document import DocumentReader
from kquota.desired.general import read_general
from kquota.desired.nodes import STR_TAG, MapNode, resolve_tag
from kquota.desired.parsed import ParsedEntry
from kquota.desired.plain import CANONICAL_V4, SURELY_SHORT
from kquota.desired.problems import Problems
from kquota.desired.reader import read_file
from kquota.desired.scan import EntryLine, scan_canonical

TYPES = ["user", "client-id", "ip", '"user"', "'client-id'", "User", "x", "1"]
NAMES = [
    "alice",
    "user-0000001",
    "client-7",
    '"svc 1"',
    "'svc-1'",
    "svc one",
    "<default>",
    '"<default>"',
    "~",
    "null",
    "yes",
    "No",
    "010",
    "1e3",
    '" pad"',
    "'pad '",
    '"é"',
    '""',
    "''",
    "10.0.0.1",
    "255.255.255.255",
    "256.1.1.1",
    "010.0.0.1",
    "1.2.3",
    '"10.0.0.2"',
    "'2001:db8::1'",
    '"2001:DB8::1"',
    '"fe80::1%eth0"',
    "2001-12-14",
    "a" * SURELY_SHORT,
    "a" * (SURELY_SHORT + 1),
]
KEYS = [
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "connection_creation_rate",
    "'request_percentage'",
    "x",
]
VALUES = ["1048576", "10MiB", "1.5", "0", "-1", "yes", "~", "010", '"5"', "1e3", "10 MiB", "200"]
PROFILES = ["gold", '"gold"', "''", "1", "~"]


GOOD_NAMES = ["alice", "user-0000001", '"svc 1"', "'svc-1'", "svc one", "client-7"]
GOOD_IPS = ["10.0.0.1", "255.255.255.255", '"10.0.0.2"', "'2001:db8::1'"]
GOOD_KEYS = {"ip": ["connection_creation_rate"], "": KEYS[:3]}
GOOD_VALUES = ["1048576", "10MiB", "1.5", "1e3", "10 MiB", "200"]
SPELLED = {"user": ["user", '"user"'], "client-id": ["client-id", "'client-id'"], "ip": ["ip"]}


def awkward(draw: st.DrawFn, good: list[str], awkward: list[str]) -> str:
    """awkward is mostly a good token, one in eight an awkward one."""
    return draw(st.sampled_from(awkward if draw(st.integers(0, 7)) == 0 else good))


@st.composite
def match_pairs(draw: st.DrawFn) -> list[tuple[str, str]]:
    types = draw(st.sampled_from([["user"], ["client-id"], ["ip"], ["user", "client-id"]]))
    types = draw(st.permutations(types))
    if draw(st.integers(0, 9)) == 0:
        types = [*types, draw(st.sampled_from(TYPES))]
    return [
        (
            awkward(draw, SPELLED.get(t, [t]), TYPES),
            awkward(draw, GOOD_IPS if t == "ip" else GOOD_NAMES, NAMES),
        )
        for t in types
    ]


@st.composite
def set_pairs(draw: st.DrawFn, ip: bool) -> list[tuple[str, str]]:
    keys = GOOD_KEYS["ip" if ip else ""]
    n = draw(st.integers(1, 3))
    return [(awkward(draw, keys, KEYS), awkward(draw, GOOD_VALUES, VALUES)) for _ in range(n)]


def _flow(written: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in written) + "}"


@st.composite
def entry(draw: st.DrawFn) -> list[str]:
    """entry is the lines of one ``quotas`` item, in one of the forms the scanner streams."""
    match = draw(match_pairs())
    set_ = draw(set_pairs(any("ip" in k for k, _ in match)))
    form = draw(st.sampled_from(["export", "block", "line"]))
    if form == "line":
        first, second = draw(st.permutations([f"match: {_flow(match)}", f"set: {_flow(set_)}"]))
        return [f"  - {{{first}, {second}}}"]
    fields = []
    for name, written in (("match", match), ("set", set_)):
        if form == "block" and draw(st.booleans()):
            fields.append([f"{name}:", *(f"    {k}: {v}" for k, v in written)])
        else:
            fields.append([f"{name}: {_flow(written)}"])
    if draw(st.booleans()):
        fields.append([f"profile: {draw(st.sampled_from(PROFILES))}"])
        if draw(st.booleans()):
            fields = [f for f in fields if not f[0].startswith("set")]
    if draw(st.integers(0, 9)) == 0:
        fields.append(draw(st.sampled_from([["match: {user: b}"], ["set: {x: 1}"], ["y: 1"]])))
    ordered = draw(st.permutations(fields))
    lines = [line for field in ordered for line in field]
    return ["  - " + lines[0], *("    " + line for line in lines[1:])]


def _taken(reader: DocumentReader, took: bool) -> ParsedEntry | None:
    entries = reader._parsed.entries
    return entries[-1] if took and entries else None


@settings(max_examples=1000, deadline=None)
@given(st.lists(entry(), min_size=1, max_size=6))
def test_plain_tokens_take_only_what_the_field_lists_take_and_alike(
    entries: list[list[str]],
) -> None:
    text = "quotas:\n" + "".join(line + "\n" for lines in entries for line in lines)
    seen: list[tuple[ParsedEntry | None, ParsedEntry | None]] = []

    def lines_both(lines: list[EntryLine]) -> bool:
        tokens = DocumentReader("f.yaml", Problems())
        fields = DocumentReader("f.yaml", Problems())
        seen.append((tokens._plain.lines(lines), _taken(fields, fields._lines_fields(lines))))
        return False

    def flow_both(groups: tuple[str | None, ...], col: int, line: int) -> bool:
        tokens = DocumentReader("f.yaml", Problems())
        fields = DocumentReader("f.yaml", Problems())
        found = tokens._plain.flow(groups, col, line)
        seen.append((found, _taken(fields, fields._flow_fields(groups, col, line))))
        return False

    scan_canonical(text, lambda node: None, flow_both, lines_both)
    for by_tokens, by_fields in seen:
        if by_tokens is not None:
            assert by_tokens == by_fields


def test_plain_tokens_read_every_common_form() -> None:
    # The forms of benchmarks/desired_styles.py: each entry from its tokens, none the long way.
    text = (
        "apiVersion: kquota/v1\nkind: ClientQuotas\n"
        "profiles:\n  gold: {producer_byte_rate: 10MiB}\nquotas:\n"
        "  - match: {user: alice, client-id: app}\n    set: {producer_byte_rate: 1048576}\n"
        "  - {match: {client-id: c}, set: {consumer_byte_rate: 2048}}\n"
        "  - match: {user: \"svc-1\", client-id: 'app-1'}\n    set: {request_percentage: 150}\n"
        "  - match:\n      ip: 10.0.0.1\n    set:\n      connection_creation_rate: 5\n"
        "  - match: {user: bob}  # note\n    set: {producer_byte_rate: 1 MiB}  # reviewed\n"
        "  - match: {client-id: app, user: carol}\n    profile: gold\n"
        "  - match: {user: dave}\n    profile: gold\n    set: {request_percentage: 150}\n"
    )
    fields: list[bool] = []

    class Recording(DocumentReader):
        def _lines_fields(self, lines: list[EntryLine]) -> bool:
            fields.append(True)
            return super()._lines_fields(lines)

        def _flow_fields(self, groups: tuple[str | None, ...], col: int, line: int) -> bool:
            fields.append(True)
            return super()._flow_fields(groups, col, line)

    reader = Recording("f.yaml", Problems())
    root = scan_canonical(text, reader.entry, reader.flow_entry, reader.entry_lines)
    parsed = reader.finish(root)
    assert fields == [] and len(parsed.entries) == 7
    problems = Problems()
    assert parsed == read_file("f.yaml", text.encode(), problems) and not problems.items
    carol = parsed.entries[5]
    assert carol.entity.parts == (("user", "carol"), ("client-id", "app"))
    assert carol.profile == "gold" and carol.profile_at is not None
    assert (carol.profile_at.line, carol.profile_at.column) == (18, 14)


@st.composite
def general_entry(draw: st.DrawFn) -> list[str]:
    """general_entry is the lines of one ``quotas`` item in a form only the general reader
    reads: names in the object form, flow spaced as formatters write it, a wider dash,
    comments and blank lines between its lines, a whole entry on one line with a profile."""
    match = draw(match_pairs())
    set_ = draw(set_pairs(any("ip" in k for k, _ in match)))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(match) - 1))
        match[i] = (match[i][0], "{name: " + match[i][1] + "}")
    sp = draw(st.sampled_from(["", " ", "  "]))

    def flow(written: list[tuple[str, str]]) -> str:
        return "{" + sp + ", ".join(f"{k}:{sp} {v}" for k, v in written) + sp + "}"

    dash = "-" + " " * draw(st.integers(1, 3))
    inner = 2 + len(dash)
    gap = draw(st.sampled_from([[], [""], ["  # note"], ["#"]]))
    if draw(st.integers(0, 3)) == 0:
        fields = [f"match: {flow(match)}", f"set: {flow(set_)}"]
        if draw(st.booleans()):
            fields.append(f"profile: {draw(st.sampled_from(PROFILES))}")
        return [f"  {dash}{{{', '.join(draw(st.permutations(fields)))}}}"]
    lines: list[list[str]] = []
    for name, written in (("match", match), ("set", set_)):
        if draw(st.booleans()):
            block = [f"{name}:{draw(st.sampled_from(['', '  # c']))}"]
            for k, v in written:
                if v.startswith("{name: ") and draw(st.booleans()):
                    block += [f"  {k}:", *gap, f"    name: {v[7:-1]}"]
                else:
                    block += [*gap, f"  {k}: {v}"]
            lines.append(block)
        else:
            lines.append([f"{name}: {flow(written)}"])
    if draw(st.booleans()):
        lines.append([f"profile: {draw(st.sampled_from(PROFILES))}  # tier"])
    ordered = [line for field in draw(st.permutations(lines)) for line in [*field, *gap]]
    first, rest = ordered[0], ordered[1:]
    return [
        f"  {dash}{first}",
        *(" " * inner + line if line[:1] not in ("", "#") else line for line in rest),
    ]


@settings(max_examples=1000, deadline=None)
@given(st.lists(general_entry(), min_size=1, max_size=6))
def test_general_tokens_take_only_what_the_nodes_take_and_alike(
    entries: list[list[str]],
) -> None:
    """Each entry the general reader hands over as tokens is offered to PlainEntries and
    then read as nodes as well: whenever the tokens give an entry, its nodes give an equal
    one, with no problem and no warning."""
    text = "quotas:\n" + "".join(line + "\n" for lines in entries for line in lines)
    by_tokens: list[ParsedEntry] = []
    by_nodes: dict[int, tuple[ParsedEntry | None, Problems]] = {}

    def take(*args: Any) -> bool:
        tokens = DocumentReader("f.yaml", Problems())
        if tokens.general_entry(*args):
            by_tokens.append(tokens._parsed.entries[-1])
        return False

    def read_nodes(node: MapNode) -> None:
        problems = Problems()
        nodes = DocumentReader("f.yaml", problems)
        nodes.entry(node)
        by_nodes[node.line] = (
            nodes._parsed.entries[-1] if nodes._parsed.entries else None,
            problems,
        )

    read_general(text, read_nodes, take)  # a file it declines after an entry: still compared
    for taken in by_tokens:
        entry, problems = by_nodes[taken.at.line]
        assert taken == entry and not problems.items and not problems.warned


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=4, max_size=4))
def test_a_canonical_ipv4_written_plain_is_a_string_to_yaml(octets: list[int]) -> None:
    # PlainEntries takes such a name without asking YAML's resolver.
    name = ".".join(map(str, octets))
    assert CANONICAL_V4.fullmatch(name) is not None
    assert resolve_tag(name, True) == STR_TAG
