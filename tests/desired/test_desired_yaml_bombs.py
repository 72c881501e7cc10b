"""YAML bombs against every reader of YAML: bounded time and memory, a clear problem, exit 1.

Every YAML file kquota reads (desired state, ``kquota.yaml``, Strimzi and Jikkou imports) is
composed by :mod:`kquota.desired.nodes`; each bomb runs through the real command in a child
process under ``resource`` limits (1 GiB of address space, 20 s of CPU), so a regression is
a failed test rather than a machine out of memory. Terraform's JSON import is held to the
same promise for the bombs JSON can carry (deep nesting, many nodes, huge scalars).
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kquota.desired.nodes import MAX_DEPTH, MapNode, YAMLProblem, compose, compose_all

GIB = 1024**3
CPU_SECONDS = 20


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def _laughs(indent: str) -> str:
    # 9 levels of 9 aliases: about 440 bytes that stand for 9**9 (387 million) strings.
    lines = [f'{indent}a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"{indent}a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _deep_block(levels: int, indent: str) -> str:
    return (
        "".join(f"{indent}{'  ' * i}k{i}:\n" for i in range(levels)) + f"{indent}{'  ' * levels}v\n"
    )


FLAT = "[" + ",".join(["0"] * 400_000) + "]"  # 800 kB, 400,001 nodes
HUGE = "x" * 900_000  # under kquota.yaml's 1 MiB

# Each reader: how a bomb is placed in one of its files, and how the command is called.
DESIRED_HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\n"
STRIMZI_HEAD = "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaUser\nmetadata:\n  name: app\n"
JIKKOU_HEAD = "apiVersion: kafka.jikkou.io/v1beta2\nkind: KafkaClientQuota\nmetadata: {}\n"

READERS: dict[str, tuple[str, Callable[[Path], list[str]]]] = {
    "desired": (DESIRED_HEAD, lambda f: ["validate", str(f)]),
    "kquota.yaml": ("clusters: {}\n", lambda f: ["plan", "--cluster", "x"]),
    "strimzi": (STRIMZI_HEAD, lambda f: ["import", "--from", "strimzi", str(f)]),
    "jikkou": (JIKKOU_HEAD, lambda f: ["import", "--from", "jikkou", str(f)]),
}

DEEP = f"nested deeper than {MAX_DEPTH} levels"
BOMBS: dict[str, tuple[Callable[[str], str], str]] = {
    # name: (the text after the reader's head, given the head; the words of the problem)
    "billion-laughs": (lambda h: h + "x:\n" + _laughs("  ") + "y: *a9\n", "billion laughs"),
    "recursive-alias": (lambda h: h + "x: &r\n  y: [*r]\n", "(a recursive alias)"),
    "recursive-alias-flow": (lambda h: h + "x: &r [[[*r]]]\n", "(a recursive alias)"),
    "deep-brackets": (lambda h: h + "x: " + "[" * 50_000 + "]" * 50_000 + "\n", DEEP),
    "deep-braces": (lambda h: h + "x: " + "{a: " * 50_000 + "1" + "}" * 50_000 + "\n", DEEP),
    "deep-brackets-under-pyyaml-limit": (
        lambda h: h + "x: " + "[" * 900 + "]" * 900 + "\n",
        DEEP,
    ),
    "deep-block": (lambda h: h + "x:\n" + _deep_block(300, "  "), DEEP),
    "many-nodes": (lambda h: h + f"many: {FLAT}\n", "many"),
    "huge-scalar": (lambda h: h + f"huge: {HUGE}\n", "huge"),
}


def _run(tmp_path: Path, reader: str, text: str) -> subprocess.CompletedProcess[str]:
    _, argv = READERS[reader]
    name = "kquota.yaml" if reader == "kquota.yaml" else "bomb.yaml"
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    code = "import sys; from kquota.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv(f)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        preexec_fn=_limits,
        timeout=120,
    )


@pytest.mark.parametrize("bomb", list(BOMBS))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_yaml_bomb_is_a_problem_at_its_place_not_a_crash(
    tmp_path: Path, reader: str, bomb: str
) -> None:
    head, _ = READERS[reader]
    make, words = BOMBS[bomb]
    done = _run(tmp_path, reader, make(head))
    out = done.stdout + done.stderr
    # Strimzi's reader skips a top-level field it does not read: its user imports (exit 0).
    skipped = words in ("many", "huge") and reader == "strimzi"
    assert done.returncode == (0 if skipped else 1), out[-2000:]
    assert "Traceback" not in out and "Error:" not in out.replace("error:", ""), out[-2000:]
    assert len(out) < 10_000, "the bomb's text reached the output"
    if words in ("many", "huge"):
        # Read in full within the limits: what is wrong is the reader's own complaint (an
        # import skips a field it does not read, so only the limits hold it there).
        if reader in ("desired", "kquota.yaml"):
            assert "unknown field" in out and "invalid YAML" not in out, out[-2000:]
    else:
        # file:line:col and the bound, whatever PyYAML's version says of it.
        assert re.search(r"(bomb|kquota)\.yaml:\d+:\d+: invalid YAML: ", out), out[-2000:]
        assert words in out, out[-2000:]
        assert "exceeded maximum nesting depth" not in out


def test_the_deep_nesting_problem_names_the_bracket_past_the_bound(tmp_path: Path) -> None:
    # The 65th "[" of line 3, whether libyaml, PyYAML's own limit or kquota saw it first.
    done = _run(tmp_path, "desired", DESIRED_HEAD + "x: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert f"bomb.yaml:3:{4 + MAX_DEPTH - 1}: invalid YAML: {DEEP}" in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, "invalid JSON"),
        ('{"a": [' + ",".join(["0"] * 400_000) + "]}", "format_version"),
        ('{"format_version": "1.0", "x": "' + HUGE + '"}', "Imported by kquota"),
    ],
    ids=["deep", "many-nodes", "huge-scalar"],
)
def test_terraform_json_is_held_to_the_same_bounds(tmp_path: Path, text: str, words: str) -> None:
    f = tmp_path / "state.json"
    f.write_text(text, encoding="utf-8")
    code = "import sys; from kquota.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "import", "--from", "terraform", str(f)],
        capture_output=True,
        text=True,
        preexec_fn=_limits,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode in (0, 1) and "Traceback" not in out and len(out) < 10_000, out[-2000:]
    assert words in out, out


# --- the bounds, one by one, in the composer itself --------------------------------------------


def test_an_alias_inside_its_own_node_is_refused_where_it_is() -> None:
    with pytest.raises(YAMLProblem) as e:
        compose(b"a: &x\n  b:\n    - *x\n")
    assert (e.value.line, e.value.col, e.value.what) == (
        3,
        7,
        "alias *x is inside the node it names (a recursive alias)",
    )


def test_aliases_count_what_they_stand_for_through_nested_aliases() -> None:
    # 4 levels of 10 aliases of a 10-item list: 11,111 nodes named, fine; the 5th level
    # stands for 111,111, past a bound of 100,000 given here (the default is 1,000,000).
    text = "a0: &a0 [" + ",".join(["0"] * 10) + "]\n"
    for i in range(1, 5):
        text += f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]\n"
    assert isinstance(compose(text.encode()), MapNode)
    with pytest.raises(YAMLProblem, match="more than 100 nodes in one document"):
        compose(text.encode(), max_nodes=100)
    shared = "s: &s {x: 1}\nl: [" + ",".join(["*s"] * 1000) + "]\n"
    assert isinstance(compose(shared.encode(), max_nodes=5_000), MapNode)  # 3,000 + a few
    with pytest.raises(YAMLProblem, match="more than 2,000 nodes") as e:
        compose(shared.encode(), max_nodes=2_000)
    assert e.value.line == 2


def test_each_document_of_a_stream_has_its_own_bounds() -> None:
    doc = "[" + ",".join(["0"] * 900) + "]\n"
    assert len(compose_all((doc + "---\n" + doc).encode(), max_nodes=1_000)) == 2
    with pytest.raises(YAMLProblem) as e:
        compose_all(
            (doc + "---\n" + doc + "---\n[" + doc + "," + doc + "]").encode(), max_nodes=1_000
        )
    assert e.value.line == 6 and "more than 1,000 nodes" in e.value.what


@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1])
def test_the_depth_bound_is_exact_in_flow_and_block(depth: int) -> None:
    flow = ("[" * depth + "]" * depth).encode()
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + "  " * depth + "v\n"
    for text in (flow, block.encode()):
        if depth <= MAX_DEPTH:
            assert compose(text) is not None
        else:
            with pytest.raises(YAMLProblem, match=DEEP):
                compose(text)


def test_a_syntax_error_past_the_bound_is_still_a_syntax_error() -> None:
    # The depth re-scan only speaks when the text is too deep before the error.
    with pytest.raises(YAMLProblem) as e:
        compose(b"a: [1, 2\nb: ]\n")
    assert "too deep" not in e.value.what and "nested" not in e.value.what
    assert e.value.line == 2
