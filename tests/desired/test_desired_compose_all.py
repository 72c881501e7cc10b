"""compose_all: the desired-state composer over a stream of documents (Kubernetes manifests)."""

from __future__ import annotations

import pytest

from kquota.desired.nodes import MapNode, Scalar, SeqNode, YAMLProblem, compose, compose_all


def test_each_document_keeps_its_own_positions_and_empty_ones_are_null() -> None:
    docs = compose_all(b"a: 1\n---\n---\n- x\n- y\n")
    assert len(docs) == 3 and isinstance(docs[1], Scalar) and docs[1].tag.endswith(":null")
    first, third = docs[0], docs[2]
    assert isinstance(first, MapNode) and (first.line, first.col) == (1, 1)
    assert isinstance(third, SeqNode) and [(i.line, i.col) for i in third.items] == [(4, 3), (5, 3)]


def test_anchors_belong_to_their_document() -> None:
    docs = compose_all(b"a: &x [1]\nb: *x\n---\nc: 1\n")
    first = docs[0]
    assert isinstance(first, MapNode) and first.pairs[0][1] is first.pairs[1][1]  # shared
    with pytest.raises(YAMLProblem, match="undefined alias"):
        compose_all(b"a: &x 1\n---\nb: *x\n")


def test_the_single_document_reader_still_refuses_a_second_document() -> None:
    assert isinstance(compose(b"a: 1\n"), MapNode)
    with pytest.raises(YAMLProblem, match="expected a single document"):
        compose(b"a: 1\n---\nb: 2\n")
    assert compose_all(b"") == []
    assert isinstance(compose_all(b"x\n")[0], Scalar)
