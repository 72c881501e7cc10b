"""kquota.runtime.gcpause: the cyclic collector is off inside the block and as it was after it."""

from __future__ import annotations

import gc

import pytest

from kquota.runtime.gcpause import collector_paused


def test_off_inside_and_back_on_after_even_after_an_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("stopped")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
