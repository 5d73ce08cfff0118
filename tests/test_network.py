"""Links: latency, FIFO order, and the nemesis' faults."""

from dataclasses import dataclass, field

from course_lib.sim import Network, Simulation


@dataclass
class Msg:
    kind: str
    n: int = 0


@dataclass
class Node:
    node_id: str
    alive: bool = True
    got: list = field(default_factory=list)
    disconnects: list = field(default_factory=list)

    def receive(self, src, msg):
        self.got.append((src, msg.kind, msg.n))

    def on_disconnect(self, peer):
        self.disconnects.append(peer)


def net(**kw):
    sim = Simulation(seed=1)
    network = Network(sim, **kw)
    a, b = Node("a"), Node("b")
    network.add(a)
    network.add(b)
    return sim, network, a, b


def test_links_are_fifo_despite_jitter():
    sim, network, a, b = net(latency_ms=1, jitter_ms=5)
    for i in range(50):
        network.send("a", "b", Msg("m", i))
    sim.run()
    assert [n for _, _, n in b.got] == list(range(50))


def test_drop_next_loses_exactly_one_matching_message():
    sim, network, a, b = net()
    network.drop_next("b", "a", kind="produce_response")
    network.send("b", "a", Msg("produce_response", 1))
    network.send("b", "a", Msg("produce_response", 2))
    network.send("b", "a", Msg("other", 3))
    sim.run()
    assert [n for _, _, n in a.got] == [2, 3]
    assert a.disconnects == []


def test_drop_with_close_tells_the_receiver_its_connection_closed():
    sim, network, a, b = net()
    network.drop_next("b", "a", kind="produce_response", close=True)
    network.send("b", "a", Msg("produce_response", 1))
    sim.run()
    assert a.got == [] and a.disconnects == ["b"]


def test_isolated_nodes_hear_nothing_until_healed():
    sim, network, a, b = net()
    network.isolate("b")
    network.send("a", "b", Msg("x", 1))
    sim.run()
    network.heal()
    network.send("a", "b", Msg("x", 2))
    sim.run()
    assert [n for _, _, n in b.got] == [2]
    assert a.disconnects == []  # silence, not a reset: the sender only has its timeouts


def test_a_dead_process_refuses_connections():
    sim, network, a, b = net()
    b.alive = False
    network.send("a", "b", Msg("x", 1))
    sim.run()
    assert b.got == [] and a.disconnects == ["b"]


def test_disconnect_arrives_after_data_already_sent():
    sim, network, a, b = net(latency_ms=1, jitter_ms=3)
    network.send("a", "b", Msg("hello"))  # b knows a
    sim.run()
    network.send("b", "a", Msg("reply", 1))
    b.alive = False
    network.node_down("b")
    sim.run()
    assert a.got == [("b", "reply", 1)] and a.disconnects == ["b"]


def test_after_send_trigger_fires_once_after_the_message_left():
    sim, network, a, b = net()
    fired = []
    network.after_send(lambda msg: fired.append((sim.now, msg.n)), src="a", kind="ack")
    network.send("a", "b", Msg("ack", 1))
    network.send("a", "b", Msg("ack", 2))
    sim.run()
    assert fired == [(0.0, 1)]
    assert len(b.got) == 2


def test_delay_slows_one_link():
    sim, network, a, b = net(latency_ms=1, jitter_ms=0)
    network.delay("a", "b", 10, both_ways=False)
    network.send("a", "b", Msg("x"))
    sim.run()
    assert sim.now == 11
