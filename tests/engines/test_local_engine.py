"""LocalEngine is the planner behind the Engine protocol."""

from kquota.engines.base import Engine
from kquota.engines.local import LocalEngine
from kquota.model import Entity
from kquota.plan.planner import plan
from kquota.plan.policy import Policy


def test_local_engine_is_the_planner() -> None:
    engine: Engine = LocalEngine()
    desired = {Entity.of({"user": "a"}): {"producer_byte_rate": 2.0}}
    snapshot = {Entity.of({"user": "a"}): {"producer_byte_rate": 1.0}}
    got = engine.plan(desired, snapshot, Policy(), "c1")
    assert got == plan(desired, snapshot, Policy(), cluster="c1")
    assert got.cluster == "c1" and engine.name == "local"
