"""The markdown escaping rule, checked by GitHub's parser on any string (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gfm
from kquota.display import safe_text
from kquota.render import md_escape as md

# Markup characters weighted up, so most examples hold some.
_MARKUP = st.sampled_from(list("`|*_[]()!<>&#@:/.\\-=~+ \n\r\t") + ["www.", "https://", "<!--"])
TEXTS = st.lists(st.one_of(_MARKUP, st.characters(), st.just("`" * 5)), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_code_is_one_code_span_showing_the_text(raw: str) -> None:
    doc = gfm.parse(md.code(raw))
    assert doc.root.tags() == {"p", "code"} and len(doc.root.all("code")) == 1
    assert doc.root.all("code")[0].text() == (safe_text(raw) or " ")


@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS)
def test_code_in_a_table_cell_keeps_the_columns(a: str, b: str) -> None:
    row = f"| {md.code(a, cell=True)} | {md.code(b, cell=True)} |"
    doc = gfm.assert_aligned(f"| x | y |\n|---|---|\n{row}\n")
    (table,) = doc.tables()
    assert table.rows == [[(safe_text(a) or " ").strip(), (safe_text(b) or " ").strip()]]


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_text_is_plain_text(raw: str) -> None:
    doc = gfm.parse("> " + md.text(raw) if raw.strip() else "x")
    assert doc.root.tags() <= {"blockquote", "p", "code"}
    assert not doc.comments
    if raw.strip():
        shown = " ".join(w for w in safe_text(raw).split(" ") if w)
        assert " ".join(doc.text().split()) == " ".join(shown.split())


@pytest.mark.parametrize("n", range(1, 12))
def test_every_run_of_backticks(n: int) -> None:
    for raw in ("`" * n, f"a{'`' * n}b", f"{'`' * n}a", f"a{'`' * n}"):
        assert gfm.parse(md.code(raw)).root.all("code")[0].text() == raw


def test_html_code_is_inert_in_an_html_block() -> None:
    doc = gfm.parse(f"<details><summary>{md.html_code('<b>x</b> <!-- & `y`')}</summary>\n")
    assert "b" not in doc.root.tags() and not doc.comments
    assert doc.root.all("code")[0].text() == "<b>x</b> <!-- & `y`"


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_fenced_is_one_code_block(raw: str) -> None:
    doc = gfm.parse(md.fenced(raw) + "after\n")
    assert doc.root.tags() == {"pre", "code", "p"} and not doc.comments
    lines = [safe_text(x) for x in raw.rstrip("\n").split("\n")]
    assert doc.root.all("code")[0].text() == "\n".join(lines) + "\n"
    assert doc.root.all("p")[-1].text() == "after"


def test_the_module_runs_as_a_filter() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "kquota.render.md_escape", "fenced"],
        input="error: ```\n<!-- x\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == "````\nerror: ```\n<!-- x\n````\n"


# E-mail addresses are autolinked by GFM itself; @user and @org/team mentions (which notify
# people) are GitHub's filter on the rendered text, outside code spans, so no backslash stops
# them. A word holding @ reads as a code span, whatever surrounds it.
@pytest.mark.parametrize(
    "prose",
    [
        "protected principal {user=alice@EXAMPLE.COM} would lose its quota",
        "held by ci@build-7 pid 42 (claim 0123456789abcdef)",
        "ask @kquota/admins or @octocat, then retry",
        "(bob@corp.example), <carol@corp.example> and mailto:dan@corp.example.",
        "@ alone, a trailing at@ and @@double",
    ],
)
def test_a_word_with_an_at_sign_is_never_a_link_or_a_mention(prose: str) -> None:
    doc = gfm.parse(md.text(prose))
    assert "a" not in doc.root.tags()
    assert "@" not in doc.root.outside_code()
    assert " ".join(doc.text().split()) == prose


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_no_at_sign_of_any_text_is_outside_a_code_span(raw: str) -> None:
    doc = gfm.parse("> " + md.text(raw) if raw.strip() else "x")
    assert "@" not in doc.root.outside_code()
