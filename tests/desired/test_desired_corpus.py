"""The bad-YAML corpus: each ``bad/<case>.yaml`` must give exactly ``bad/<case>.expected``.

To add a case, write the YAML and the messages you expect; never copy the loader's output
without reading it. Every corpus file (bad and good) is also read by both readers, which
must agree node for node (see kquota.desired.fastpath).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kquota.desired import DesiredStateError, load_desired
from kquota.desired.fastpath import parse_canonical
from kquota.desired.general import read_general
from kquota.desired.nodes import MapNode, Node, Scalar, SeqNode, compose

HERE = Path(__file__).parent
BAD = sorted((HERE / "bad").glob("*.yaml"))
GOOD = sorted((HERE / "good").glob("*.yaml"))
WARN = sorted((HERE / "warn").glob("*.yaml"))


def test_desired_corpus_is_complete() -> None:
    assert len(BAD) >= 40
    for case in BAD:
        assert case.with_suffix(".expected").is_file(), f"{case.name} has no .expected"


@pytest.mark.parametrize("case", BAD, ids=lambda p: p.stem)
def test_desired_bad_file_messages(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(case.parent)
    with pytest.raises(DesiredStateError) as info:
        load_desired([Path(case.name)])
    expected = case.with_suffix(".expected").read_text()
    assert str(info.value) + "\n" == expected
    assert [str(p) for p in info.value.problems] == expected.splitlines()


@pytest.mark.parametrize("case", WARN, ids=lambda p: p.stem)
def test_desired_warn_file_messages(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # warn/<case>.yaml loads, and its warnings are exactly warn/<case>.expected.
    monkeypatch.chdir(case.parent)
    state = load_desired([Path(case.name)])
    assert state.quotas
    expected = case.with_suffix(".expected").read_text().splitlines()
    assert [str(w) for w in state.warnings] == expected


@pytest.mark.parametrize("case", BAD + GOOD + WARN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_desired_readers_agree(case: Path) -> None:
    data = case.read_bytes()
    for fast in (parse_canonical(data.decode("utf-8")), read_general(data.decode("utf-8"))):
        if fast is not None:  # else not a shape this reader takes: the composer reads it
            assert fast == compose(data)


@pytest.mark.parametrize("case", GOOD, ids=lambda p: p.stem)
def test_desired_good_file_loads(case: Path) -> None:
    state = load_desired([case])
    assert state.quotas
    assert set(state.sources) == set(state.quotas)


def _from_pyyaml(node: yaml.Node) -> Node:
    mark = node.start_mark
    if isinstance(node, yaml.ScalarNode):
        return Scalar(node.tag, node.value, mark.line + 1, mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        pairs = [(_from_pyyaml(k), _from_pyyaml(v)) for k, v in node.value]
        return MapNode(pairs, mark.line + 1, mark.column + 1)
    return SeqNode([_from_pyyaml(i) for i in node.value], mark.line + 1, mark.column + 1)


@pytest.mark.parametrize("case", BAD + GOOD + WARN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_desired_composer_matches_pyyaml(case: Path) -> None:
    # kquota composes from libyaml's events itself (no recursion); PyYAML's own composer,
    # pure Python, is the reference for tags, values and positions.
    data = case.read_bytes()
    try:
        reference = yaml.compose(data, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError):
            compose(data)
        return
    try:
        mine = compose(data)
    except yaml.YAMLError as e:  # kquota is stricter on purpose, and only here
        assert "unsupported tag" in str(e) or "nested deeper" in str(e)
        return
    assert mine == (None if reference is None else _from_pyyaml(reference))


def test_desired_deep_nesting_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    # libyaml's recursive composer segfaults on this; run it in a child to survive a regression.
    f = tmp_path / "deep.yaml"
    f.write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: " + "[" * 50_000 + "]" * 50_000
    )
    code = "import sys; from kquota.cli.main import main; sys.exit(main(['validate', sys.argv[1]]))"
    done = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "nested deeper than 64 levels" in done.stderr
