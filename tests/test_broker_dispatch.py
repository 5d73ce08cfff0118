"""The simulator's typed dispatch (course_lib/broker/__init__.py): every request class has exactly
one handler, found by its class, and a message nobody handles fails loudly."""

import dataclasses
import inspect

import pytest

from course_lib.broker import Cluster, protocol
from course_lib.broker.broker import HANDLERS as BROKER_HANDLERS
from course_lib.broker.controller import Controller
from course_lib.broker.group_coordinator import GroupCoordinator
from course_lib.broker.share_group import ShareGroupCoordinator
from course_lib.broker.txn_coordinator import TxnCoordinator

#: what each message family's base class is for: never sent itself
BASES = {protocol.CoordinatorRequest, protocol.GroupRequest, protocol.TxnRequest}


def _messages() -> list[type]:
    return [
        cls
        for _, cls in inspect.getmembers(protocol, inspect.isclass)
        if dataclasses.is_dataclass(cls) and isinstance(getattr(cls, "kind", None), str)
    ]


def _requests() -> list[type]:
    return [cls for cls in _messages() if cls.__name__.endswith("Request") and cls not in BASES]


def test_every_message_is_a_frozen_dataclass_with_a_kind():
    for cls in _messages():
        assert cls.__dataclass_params__.frozen, f"{cls.__name__} is not frozen"
        assert isinstance(cls.kind, str) and cls.kind, f"{cls.__name__} has no kind"


@pytest.mark.parametrize("request_class", _requests(), ids=lambda c: c.__name__)
def test_every_request_has_exactly_one_handling_node(request_class):
    tables = {"broker": BROKER_HANDLERS, "controller": Controller.HANDLERS}
    handled_by = [name for name, table in tables.items() if request_class in table]
    assert len(handled_by) == 1, f"{request_class.__name__} is handled by {handled_by or 'no node'}"


def test_each_coordinator_request_reaches_the_coordinator_whose_table_names_it():
    assert not set(GroupCoordinator.HANDLERS) & set(TxnCoordinator.HANDLERS)
    assert not set(GroupCoordinator.HANDLERS) & set(ShareGroupCoordinator.HANDLERS)
    for cls in [*GroupCoordinator.HANDLERS, *ShareGroupCoordinator.HANDLERS]:
        assert issubclass(cls, protocol.GroupRequest), cls
    for cls in TxnCoordinator.HANDLERS:
        assert issubclass(cls, protocol.TxnRequest), cls
    coordinator_requests = {cls for cls in _requests() if issubclass(cls, protocol.CoordinatorRequest)}
    assert coordinator_requests == (
        set(GroupCoordinator.HANDLERS) | set(TxnCoordinator.HANDLERS) | set(ShareGroupCoordinator.HANDLERS)
    )


def test_a_coordinator_request_names_the_coordinator_to_find():
    join = protocol.JoinGroupRequest(group="g", member_id="", client_id="c", topics=["t"], session_timeout_ms=10)
    end = protocol.EndTxnRequest(transactional_id="tx", producer_id=1, producer_epoch=0, commit=True)
    assert (join.coordinator_key, join.describe(), join.kind) == (("group", "g"), "join_group", "coordinator_request")
    assert (end.coordinator_key, end.describe()) == (("transaction", "tx"), "end_txn")
    assert dataclasses.replace(join, corr=7).corr == 7 and join.corr == 0  # a retry: a new correlation id


def test_a_message_no_table_names_fails_loudly():
    @dataclasses.dataclass(frozen=True)
    class Unheard:
        kind = "unheard"

    c = Cluster(3, seed=1)
    with pytest.raises(AssertionError, match="unheard"):
        c.brokers[1].receive("nobody", Unheard())
    with pytest.raises(AssertionError, match="unheard"):
        c.controller.receive("nobody", Unheard())
