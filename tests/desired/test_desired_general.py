"""The general reader must give exactly the composer's nodes, or decline (issue 34).

Hypothesis writes documents in every style people use (block mappings nested to any depth,
flow mappings nested and spaced any way, lists at their key's indentation or deeper, ``-``
followed by several spaces, comments and blank lines anywhere, ``---``, profiles and
entries with overrides, every entity shape, units, awkward YAML 1.1 tokens), some of them
broken (a tab, a character lost, an indentation moved, an anchor, an alias, a tag), and
checks that :func:`read_general` gives the composer's nodes whenever it takes a file, and
that loading a file gives the same entries, problems and warnings (byte for byte) as the
composer alone.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.desired.test_desired_fastpath import RISKY, SAFE, composed

from kquota.desired import load_desired, reader
from kquota.desired.document import DocumentReader
from kquota.desired.general import read_general
from kquota.desired.nodes import MapNode, Node, Scalar, SeqNode
from kquota.desired.problems import Problem, Problems

NAMES = ["alice", "<default>", "svc-1", "John Smith", "'a b'", '"007"', "a.b@c", "' pad'"]
IPS = ["203.0.113.7", '"2001:db8::1"', "2001:db8::1", "<default>", "'10.0.0.1'", "host"]
VALUES = ["10MiB", "10 MiB/s", "1.5KiB", "500KB", "1048576", "150", "12.5", "1_000", "2"]
BAD_VALUES = ["010", "0x10", "1:30", ".nan", "true", "1e3", "1.0e+3", "-5", "''", "null"]
KEYS = ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]
KEYS += ["controller_mutation_rate", '"request_percentage"', "'consumer_byte_rate'"]
IP_KEYS = ["connection_creation_rate", "'connection_creation_rate'"]
# One token in fifteen is an awkward one, so that many files are still valid.
odd = st.sampled_from(SAFE + RISKY + BAD_VALUES + ["bogus", "connection_creation_rate"])


def pick(choices: list[str]) -> st.SearchStrategy[str]:
    return st.integers(0, 14).flatmap(lambda i: odd if i == 0 else st.sampled_from(choices))


sp = st.sampled_from([" ", " ", "  "])  # after ':' (at least one)
inner = st.sampled_from(["", "", " ", "  "])  # inside brackets, around ','
tail = st.sampled_from(["", "", "", "  # c", " #c", "   "])

# A value: ("s", scalar text), ("f", flow text) or ("b", [(key, value)]) for a block mapping.
Value = tuple[str, object]


@st.composite
def flow_map(draw: st.DrawFn, pairs: list[tuple[str, str]]) -> str:
    i = draw(inner)
    sep = draw(st.sampled_from([", ", ",", " , ", ",  "]))
    body = sep.join(f"{k}:{draw(sp)}{v}" for k, v in pairs)
    return "{" + i + body + i + "}"


@st.composite
def name_value(draw: st.DrawFn, etype: str) -> Value:
    name = draw(pick(IPS if etype == "ip" else NAMES))
    form = draw(st.integers(0, 5))
    if form == 0:  # the object form, in flow or in block
        fields = [("name", name)] + ([("verbatim", "true")] if draw(st.booleans()) else [])
        if draw(st.booleans()):
            return ("f", draw(flow_map(fields)))
        return ("b", [(k, ("s", v)) for k, v in fields])
    return ("s", name)


@st.composite
def match_value(draw: st.DrawFn) -> tuple[Value, bool]:
    """match_value is a ``match`` and whether it names an ip."""
    shape = draw(st.sampled_from([["user"], ["client-id"], ["user", "client-id"], ["ip"]]))
    if draw(st.integers(0, 19)) == 0:
        shape = draw(st.sampled_from([[], ["user", "ip"], ["user", "user"], ["team"]]))
    pairs = [(t, draw(name_value(t))) for t in shape]
    if draw(st.booleans()) or any(v[0] == "b" for _, v in pairs):
        return ("b", pairs), "ip" in shape
    return ("f", draw(flow_map([(k, str(v[1])) for k, v in pairs]))), "ip" in shape


@st.composite
def set_value(draw: st.DrawFn, ip: bool = False) -> Value:
    least = draw(st.sampled_from([0] + [1] * 9))
    keys = draw(st.lists(pick(IP_KEYS if ip else KEYS), min_size=least, max_size=4, unique=True))
    pairs = [(k, draw(pick(VALUES))) for k in keys]
    if draw(st.booleans()):
        return ("b", [(k, ("s", v)) for k, v in pairs]) if pairs else ("f", "{}")
    return ("f", draw(flow_map(pairs)))


@st.composite
def entry(draw: st.DrawFn) -> list[tuple[str, Value]]:
    match, ip = draw(match_value())
    fields: list[tuple[str, Value]] = [("match", match)]
    has_set = draw(st.integers(0, 3)) != 0
    if has_set:
        fields.append(("set", draw(set_value(ip))))
    if not has_set or draw(st.integers(0, 2)) == 0:
        fields.append(("profile", ("s", draw(pick(["gold", "tier-1", "'gold'"])))))
    if draw(st.integers(0, 30)) == 0:
        fields.append(draw(st.sampled_from([("x", ("s", "1")), ("match", ("s", "alice"))])))
    return draw(st.permutations(fields))


def block(draw: st.DrawFn, pairs: list[tuple[str, Value]], indent: int) -> list[str]:
    """block writes a block mapping at ``indent``, its nested mappings deeper."""
    lines = []
    step = draw(st.sampled_from([1, 2, 2, 4]))
    for key, (kind, value) in pairs:
        pad = " " * indent
        if kind == "b":
            assert isinstance(value, list)
            lines.append(f"{pad}{key}:{draw(tail)}")
            lines += block(draw, value, indent + step)
        else:
            lines.append(f"{pad}{key}:{draw(sp)}{value}{draw(tail)}")
    return lines


@st.composite
def document(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["---", "--- # quotas", "# quotas", "%YAML 1.1\n---"])))
    kind = draw(pick(["ClientQuotas", "ClientQuotasOverlay"]))
    sections = [[f"apiVersion:{draw(sp)}kquota/v1"], [f"kind: {kind}"]]
    if draw(st.booleans()):
        profiles = [
            (draw(pick(["gold", "tier-1"])), draw(set_value()))
            for _ in range(draw(st.integers(0, 2)))
        ]
        if profiles and draw(st.booleans()):
            sections.append(block(draw, [("profiles", ("b", profiles))], 0))
        else:
            flows = ", ".join(f"{n}: {v[1] if v[0] == 'f' else '{}'}" for n, v in profiles)
            sections.append([f"profiles: {{{flows}}}"])
    quotas = ["quotas:" + draw(tail)]
    list_at = draw(st.sampled_from([0, 2, 4]))
    for _ in range(draw(st.sampled_from([0, 1, 2, 2, 3, 3, 4, 4, 5, 5]))):
        fields = draw(entry())
        dash = "-" + " " * draw(st.sampled_from([1, 1, 3]))
        at = list_at + len(dash)
        if draw(st.integers(0, 4)) == 0 and all(v[0] != "b" for _, v in fields):
            flat = ", ".join(f"{k}: {v}" for k, (_, v) in fields)
            quotas.append(f"{' ' * list_at}{dash}{{{flat}}}{draw(tail)}")
            continue
        written = block(draw, fields, at)
        quotas.append(" " * list_at + dash + written[0][at:])
        quotas += written[1:]
        if draw(st.integers(0, 3)) == 0:
            quotas.append(draw(st.sampled_from(["", "  # next", "#"])))
    if len(quotas) == 1 and draw(st.booleans()):
        quotas = [draw(st.sampled_from(["quotas: []", "quotas: [ ]", "quotas:"]))]
    sections.append(quotas)
    for section in draw(st.permutations(sections)):
        lines += section
    if draw(st.integers(0, 5)) == 0:
        lines = draw(mutated(lines))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "\n", "", "\n\n"]))


@st.composite
def mutated(draw: st.DrawFn, lines: list[str]) -> list[str]:
    """mutated breaks or bends one line: YAML's judgment, errors, anchors, aliases, tags."""
    i = draw(st.integers(0, len(lines) - 1))
    line = lines[i]
    how = draw(st.integers(0, 7))
    cut = draw(st.integers(0, len(line)))
    if how == 0:
        line = line[:cut] + line[cut + 1 :]
    elif how == 1:
        line = line[:cut] + "\t" + line[cut:]
    elif how == 2:
        line = " " + line
    elif how == 3:
        line = line.replace(": ", ": &a ", 1)
    elif how == 4:
        line = line.replace(": ", ": *a ", 1)
    elif how == 5:
        line = line.replace(": ", ": !!str ", 1)
    elif how == 6:
        line = (
            line[:cut]
            + draw(st.sampled_from(["{", "}", "[", ",", ":", "#", "'", '"']))
            + line[cut:]
        )
    else:
        line = line.lstrip(" ")
    return lines[:i] + [line] + lines[i + 1 :]


def composer_only(text: str) -> tuple[object, list[Problem], tuple[Problem, ...]]:
    """composer_only loads ``text`` as read_file does with every fast reader declining."""

    def none(*args: object, **kwargs: object) -> None:
        return None

    with (
        mock.patch.object(reader, "scan_canonical", none),
        mock.patch.object(reader, "parse_canonical", none),
        mock.patch.object(reader, "read_general", none),
    ):
        return loaded(text)


def nodes_only(text: str) -> tuple[object, list[Problem], tuple[Problem, ...]]:
    """nodes_only loads ``text`` as read_file does with no entry taken as tokens."""
    with mock.patch.object(DocumentReader, "general_entry", lambda self, *args: False):
        return loaded(text)


def taken_as_tokens(text: str) -> tuple[int, int]:
    """taken_as_tokens is how many entries of ``text`` the general reader hands over as
    tokens and are taken, and how many it reads as nodes."""
    counts = [0, 0]
    general_entry, entry = DocumentReader.general_entry, DocumentReader.entry

    def tokens(self: DocumentReader, *args: Any) -> bool:
        took = general_entry(self, *args)
        counts[0] += took
        return took

    def nodes(self: DocumentReader, node: Node) -> None:
        counts[1] += 1
        entry(self, node)

    with (
        mock.patch.object(DocumentReader, "general_entry", tokens),
        mock.patch.object(DocumentReader, "entry", nodes),
    ):
        reading = DocumentReader("f.yaml", Problems())
        assert read_general(text, reading.entry, reading.general_entry) is not None
    return counts[0], counts[1]


def loaded(text: str) -> tuple[object, list[Problem], tuple[Problem, ...]]:
    problems = Problems()
    parsed = reader.read_file("f.yaml", text.encode("utf-8"), problems)
    return parsed, sorted(problems.items), problems.warnings


def with_streamed(root: Node, streamed: list[MapNode]) -> Node:
    """with_streamed puts the entries handed to on_entry back into the quotas list."""
    assert isinstance(root, MapNode)
    for key, value in root.pairs:
        if isinstance(value, SeqNode) and isinstance(key, Scalar) and key.value == "quotas":
            assert not value.items or not streamed
            value.items.extend(streamed)
            streamed = []
    assert not streamed
    return root


def assert_declined(head: str, bodies: list[str]) -> None:
    """assert_declined: the general reader leaves each of ``head`` + ``bodies`` to the
    composer, and the load still agrees with the composer's."""
    for body in bodies:
        assert read_general(head + body) is None, body
        assert_general_agrees(head + body)


def assert_general_agrees(text: str) -> None:
    got = read_general(text)
    if got is not None:
        assert got == composed(text)
        streamed: list[MapNode] = []
        root = read_general(text, streamed.append)
        if root is not None:  # streaming may decline more (a duplicate quotas key)
            assert with_streamed(root, streamed) == got
    # Entries taken as tokens give what their nodes give: the same entries, positions,
    # problems and warnings, byte for byte, and both what the composer alone gives.
    composed_only = composer_only(text)
    assert loaded(text) == composed_only
    assert nodes_only(text) == composed_only


@settings(max_examples=1000, deadline=None)
@given(document())
def test_general_reader_equals_composer(text: str) -> None:
    assert_general_agrees(text)


def test_general_reader_takes_the_styles_people_write() -> None:
    """Each of these is read by the general reader (not declined) and composes alike."""
    texts = [
        "---\napiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n- match:\n    user: a\n"
        "  set:\n    producer_byte_rate: 10 MiB/s  # c\n",
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n    -   match:  { user: a ,"
        "  client-id: {name: <default>} }\n        set:    { request_percentage:  150 }\n",
        "apiVersion: kquota/v1\nkind: ClientQuotas\nprofiles:\n  gold:\n    producer_byte_rate:"
        " 1MiB\nquotas:\n  - match:\n      user:\n        name: x\n        verbatim: true\n"
        "    profile: gold\n    set:   # overrides\n      request_percentage: 200\n",
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n  - match:\n      ip: 2001:db8::1\n"
        "    set: {connection_creation_rate: 10}\n  - {set: {producer_byte_rate: 1KiB},"
        " match: {user: b}}\n",
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\nprofiles: {}\n",
    ]
    for text in texts:
        assert read_general(text) is not None, text
        assert_general_agrees(text)


def test_general_reader_reads_flow_mappings_nested_once_as_composed() -> None:
    """A flow mapping of scalars and flat flow mappings (one match, not the token reader):
    the same nodes and positions as the composer, quoted text holding indicators included,
    and the token reader's verdict where the shape goes further."""
    head = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
    lines = [
        "  - {set: {producer_byte_rate: 1KiB}, match: {user: b}}",
        "  - { set:  { producer_byte_rate:  1 MiB/s ,request_percentage: 5 } ,match: {} }",
        "  - match: {user: {name: 'a}: {b'}, client-id: {name: \"c, d\"}}  # c",
        "  - match: {'user': {\"name\": x y, verbatim: true}}\n    set: {request_percentage: 1}",
        "  - match: {user: {name: x}, user: {name: y}}\n    set: {request_percentage: 1}",
        "  - match: {user: {name: {deeper: x}}}\n    set: {request_percentage: 1}",
        "  - match: {user: {name: x}} trailing\n    set: {request_percentage: 1}",
    ]
    for line in lines:
        assert_general_agrees(head + line + "\n")
    assert read_general(head + lines[2] + "\n") is not None


def test_a_set_read_once_is_judged_for_each_entity_as_composed() -> None:
    """A ``set`` is read once a spelling, but whether its keys suit the entity is asked of
    every entry: the same set on an ip and then on a user gives the walker's problem for the
    user, and a set refused once is refused again, as the composer's reading says."""
    head = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
    body = (
        "  - match:\n      ip: 10.0.0.1\n    set:\n      connection_creation_rate: 10\n"
        "  - match:\n      user: a\n    set:\n      connection_creation_rate: 10\n"
        "  - match:\n      user: b\n    set:\n      producer_byte_rate: fast\n"
        "  - match:\n      user: c\n    set:\n      producer_byte_rate: fast\n"
    )
    assert read_general(head + body) is not None
    assert_general_agrees(head + body)
    parsed, problems, _ = loaded(head + body)
    assert [p.line for p in problems] == [11, 15, 19], problems


def test_general_reader_declines_what_needs_yaml_judgment() -> None:
    """Anchors, aliases, tags, escapes, multi-line scalars, nulls, tabs: the composer's."""
    head = "apiVersion: kquota/v1\nkind: ClientQuotas\n"
    texts = [
        "quotas:\n  - match: &m {user: a}\n    set: {producer_byte_rate: 1}\n",
        "quotas:\n  - match: {user: a}\n    set: *s\n",
        "quotas:\n  - match: {user: !!str 007}\n    set: {producer_byte_rate: 1}\n",
        'quotas:\n  - match: {user: "a\\tb"}\n    set: {producer_byte_rate: 1}\n',
        "quotas:\n  - match: {user: a\n      b}\n    set: {producer_byte_rate: 1}\n",
        "quotas:\n  - match:\n      user: a\n        b\n",
        "quotas:\n",
        "quotas:\n  - match:\n\tuser: a\n",
        "quotas:\n  - match:\n      user: |\n        a\n",
        "quotas:\n  - ? match\n    : {user: a}\n",
        "quotas:\n  - match: {user: a}\n    set: {producer_byte_rate: 1}\n...\n",
        "quotas:\n  - match: {ip: 2001:db8::1}\n    set: {connection_creation_rate: 1}\n",
    ]
    assert_declined(head, texts)


def test_general_reader_reads_the_docs_examples() -> None:
    """Every example file of the docs is read by a fast reader, exactly as composed."""
    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "examples" / "desired").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert_general_agrees(text)
        assert read_general(text) is not None, path


def test_general_reader_reads_the_benchmark_styles_written_from_the_docs(tmp_path: Path) -> None:
    """The benchmark's styles written from the docs (not the scanner's patterns) are read by
    the general reader whole, exactly as composed, and load as the composer alone loads."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    from bench_plan import states
    from desired_styles import DOC_STYLES, write_style

    desired, _ = states(400)
    for style in DOC_STYLES:
        folder = tmp_path / style
        folder.mkdir()
        (path,) = write_style(style, desired, folder)
        text = path.read_text(encoding="utf-8")
        assert read_general(text) is not None, style
        assert taken_as_tokens(text) == (len(desired), 0), style
        assert_general_agrees(text)
        assert load_desired([path]).quotas == desired


def test_plain_entries_are_taken_as_tokens_as_their_nodes_read() -> None:
    """Plain entries in each shape people write are taken as tokens (no nodes), with the
    positions, profiles and values their nodes give; what is not plain, or not written as
    YAML reads it plainly, is read as nodes, with the walker's messages."""
    head = "apiVersion: kquota/v1\nkind: ClientQuotas\nprofiles: {gold: {request_percentage: 5}}\n"
    taken = [
        "quotas:\n  - match: {user: a, client-id: {name: b}}  # c\n"
        "    set: {request_percentage: 1}\n",
        "quotas:\n- match:\n    user:\n      name: 'a'\n    client-id: \"b\"\n  set:\n"
        "    producer_byte_rate: 10 MiB/s  # c\n    request_percentage: 5\n",
        "quotas:\n    -   match:  { user: x ,  client-id:  {name: y } }\n        set:    "
        "{ request_percentage:  150 ,consumer_byte_rate: 1KiB }\n",
        "quotas:\n  - {set: {request_percentage: 1}, match: {user: {name: a}}, profile: gold}\n"
        "  - {profile: 'gold', match: {ip: 10.0.0.1}}\n",
        "quotas:\n  - set:   # overrides\n\n      # the percentage\n      request_percentage: 2\n"
        "    # the entity\n    match:\n      user: {name: a}\n    profile: gold  # tier\n",
        "quotas:\n  - match:\n      ip: 2001:db8::1\n    set: {connection_creation_rate: 3}\n"
        "  - match: {ip: '2001:db8::2'}\n    set:\n      connection_creation_rate: 3",
        "quotas:\n- match: {user: a}\n  set: {request_percentage: 1}\nkind: ClientQuotas\n",
    ]
    for body in taken:
        text = head.replace("kind: ClientQuotas\n", "") if "\nkind:" in body else head
        text += body
        assert taken_as_tokens(text) == (body.count("match"), 0), body
        assert_general_agrees(text)
    nodes = [
        # the object form with more than a name, or naming <default>; a field written twice
        "quotas:\n  - match: {user: {name: a, verbatim: true}}\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {user: {name: <default>}}\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {user: a}\n    match: {user: b}\n    set: {request_percentage: 1}\n",
        "quotas:\n  - {match: {user: a}, set: {request_percentage: 1},"
        " set: {request_percentage: 2}}\n",
        # five keys a set (never plain), a value in the object form, a key the entity may not have
        "quotas:\n  - match: {user: a}\n    set:\n      request_percentage: 1\n"
        "      producer_byte_rate: 1\n      consumer_byte_rate: 1\n"
        "      controller_mutation_rate: 1\n      request_percentage: 2\n",
        "quotas:\n  - match: {user: a}\n    set: {request_percentage: {name: 1}}\n",
        "quotas:\n  - match: {user: a}\n    set: {connection_creation_rate: 1}\n",
        # match or set a scalar, profile a mapping, an unknown field, a quoted field name
        "quotas:\n  - match: a\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {user: a}\n    profile: {name: gold}\n",
        "quotas:\n  - match: {user: a}\n    set: {request_percentage: 1}\n    note: x\n",
        'quotas:\n  - "match": {user: a}\n    set: {request_percentage: 1}\n',
        # a number, a boolean and an empty name; a non-canonical ip
        "quotas:\n  - match: {user: 010}\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match:\n      client-id: yes\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {user: ''}\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {ip: 010.0.0.1}\n    set: {connection_creation_rate: 1}\n",
    ]
    for body in nodes:
        assert taken_as_tokens(head + body)[0] == 0, body
        assert_general_agrees(head + body)
    declined = [
        # a key at the entry's own indentation under "match:" (match is null), a line deeper
        # than the entry's keys, a line between the dash and the keys, the document's end
        "quotas:\n  - match:\n    user: a\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {user: a}\n    set: {request_percentage: 1}\n      x: 1\n",
        "quotas:\n  - match: {user: a}\n    set: {request_percentage: 1}\n   x: 1\n",
        "quotas:\n  - match:\n      user: a\n     client-id: b\n    set: {request_percentage: 1}\n",
        "quotas:\n  - match: {user: a}\n    set: {request_percentage: 1}\n...\n",
        "quotas:\n  - match: {user: a}\n    set: {request_percentage: 1}\t\n",
    ]
    assert_declined(head, declined)


def test_warnings_found_by_a_fast_reader_are_kept(tmp_path: Path) -> None:
    """A name with surrounding whitespace warns whichever reader read its file (the scanner's
    and the general reader's warnings were dropped: only their problems were kept)."""
    head = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
    for body in (
        "  - match: {user: ' alice'}\n    set: {producer_byte_rate: 1}\n",  # the scanner's
        "  - match: { user: ' alice' }\n    set: {producer_byte_rate: 1}\n",  # the general's
    ):
        path = tmp_path / "q.yaml"
        path.write_text(head + body, encoding="utf-8")
        warnings = [str(w) for w in load_desired([path]).warnings]
        assert len(warnings) == 1 and "leading or trailing whitespace" in warnings[0], body
        assert warnings[0].startswith(f"{path}:4:")
        assert loaded(head + body) == composer_only(head + body)
