"""The delivery simulator: one widget app to set a producer up, break things and see the result.

It is the Voila demo ``notebooks/demos/delivery_simulator.ipynb`` and the playground of
notebooks 02-04. Every control is a plain ipywidget, so tests drive it headless:

>>> app = DeliverySimulator(seed=1)
>>> app.acks.value = "1"; app.idempotence.value = False; app.lagging_followers.value = True
>>> app.send_button.click(); app.crash_button.click(); app.check_button.click()
>>> app.result.outcome_table()["lost (acknowledged)"]
5

Settings are fixed when a run starts (as a real producer's config is): changing one starts a new
run. Faults: "crash leader" kills the partition's leader now; "lose next ACK" drops the next
produce response, so the producer times out and retries; "lagging followers" pauses the followers
(a long GC pause) until the leader crashes, which is when acks=1 loses acknowledged writes.

A lesson starts it with a preset: its settings and the steps to try, shown above the app
(``DeliverySimulator(preset="lost_ack")``; the names are in ``PRESETS``).

Taught in notebooks/01_replicated_log to notebooks/04_idempotent_producer and 08_claims_tested.
"""

from __future__ import annotations

import html
import re
import warnings

import ipywidgets as widgets
from kafka.errors import KafkaTimeoutError

from ..backends.sim import SimBackend
from ..broker.simulated_cluster import SimulatedCluster
from ..judge.checker import check
from ..clients import KafkaProducer
from ..clients.config import ConfigurationError
from ..history import FAIL, INFO, OK, OUTCOMES, OpName
from ..experiments.scenarios import FAST_FAILOVER
from .cluster_view import cluster_html
from .outcome import outcome_html
from .presets import Preset, Step, lookup

TOPIC = "events"
RETRIES = {"unbounded (default)": float("inf"), "0 (never retry)": 0}
CONTROLS = ("acks", "min_insync", "idempotence", "retries", "in_flight", "lagging_followers")
BUTTONS = ("send", "crash", "lose_ack", "restart", "step", "run", "check", "reset")

# One per lesson; every step's `expect` is asserted by tests/test_viz_presets.py.
PRESETS = {
    "start_here": Preset(
        "the checker's words, one run each (lesson 00)",
        {"idempotence": False, "acks": "all"},
        (
            Step(("send", "check"), "Nothing goes wrong: what does the checker say?", ("No anomalies",)),
            Step(
                ("lose_ack", "send", "check"),
                "An ACK is lost: lost, duplicated or reordered?",
                ("5 messages duplicated",),
            ),
            Step(
                ("send", "crash", "check"),
                "The leader acknowledges alone and crashes: which word now?",
                ("5 messages lost",),
                {"acks": "1", "lagging_followers": True},
            ),
        ),
    ),
    "replicated_log": Preset(
        "leaders, followers, LEO and HW (lesson 01)",
        {"acks": "all"},
        (
            Step(
                ("send",),
                "How many of the 5 are acknowledged after 10 ms? Compare the LEO and HW of each replica.",
                ("5 of 5 acknowledged",),
            ),
            Step(
                ("send",),
                "The followers are paused but still in the ISR: how many are acknowledged now?",
                ("0 of 5 acknowledged, 5 waiting",),
                {"lagging_followers": True},
            ),
            Step(
                ("crash", "check"),
                "Who leads next, in which leader epoch? Is anything lost?",
                ("controller elected broker 2 (leader epoch 1)", "No anomalies"),
            ),
        ),
    ),
    "acks": Preset(
        "acks and a leader crash (lesson 02)",
        {"idempotence": False, "acks": "1", "lagging_followers": True},
        (
            Step(("send", "crash", "check"), "How many acknowledged messages survive?", ("5 messages lost",)),
            Step(
                ("send", "crash", "check"),
                "The same crash: lost now?",
                ("No anomalies",),
                {"acks": "all"},
            ),
        ),
    ),
    "lost_ack": Preset(
        "a lost ACK, with and without retries (lesson 03)",
        {"idempotence": False, "acks": "all"},
        (
            Step(("lose_ack", "send", "check"), "Lost, duplicated, or fine?", ("5 messages duplicated",)),
            Step(
                ("lose_ack", "send", "check"),
                "What does the producer report, and what is in the log? (read 'What happened')",
                ("0 of 5 acknowledged, 5 failed", "No anomalies"),
                {"retries": "0 (never retry)"},
            ),
        ),
    ),
    "idempotence": Preset(
        "idempotence against a lost ACK (lesson 04)",
        {"idempotence": False, "acks": "all"},
        (
            Step(("lose_ack", "send", "check"), "How many duplicates?", ("5 messages duplicated",)),
            Step(("lose_ack", "send", "check"), "And with idempotence?", ("No anomalies",), {"idempotence": True}),
            Step((), "Asked for explicitly, can idempotence go with acks=1?", ("do not go together",), {"acks": "1"}),
        ),
    ),
}


class DeliverySimulator:
    """Controls + cluster view + log + outcome table for one simulated producer and topic."""

    def __init__(
        self,
        seed: int = 1,
        messages_per_click: int = 5,
        step_ms: float = 10,
        run_ms: float = 1000,
        preset: str | None = None,
    ):
        """``preset``: a name from ``PRESETS`` (a lesson's starting settings and steps to try)."""
        self.preset = lookup(PRESETS, preset, "DeliverySimulator")
        self._captured = None
        self.seed = seed
        self.messages_per_click = messages_per_click
        self.step_ms, self.run_ms = step_ms, run_ms
        style = {"description_width": "150px"}
        self.acks = widgets.ToggleButtons(
            options=["0", "1", "all"],
            value="all",
            description="acks",
            style=style,
            tooltips=["fire and forget", "leader only", "all in-sync replicas"],
        )
        self.min_insync = widgets.IntSlider(value=2, min=1, max=3, description="min.insync.replicas", style=style)
        self.idempotence = widgets.Checkbox(value=True, description="idempotence (enable_idempotence)", indent=False)
        self.retries = widgets.Dropdown(
            options=list(RETRIES),
            value="unbounded (default)",
            description="retries",
            style=style,
            layout=widgets.Layout(width="340px"),  # the whole "unbounded (default)" (JupyterLab cuts it)
        )
        self.in_flight = widgets.IntSlider(value=5, min=1, max=5, description="max in flight", style=style)
        self.lagging_followers = widgets.Checkbox(
            value=False,
            indent=False,
            description="lagging followers",
            tooltip="the followers are paused (a long GC pause) until the leader crashes",
        )
        self.send_button = widgets.Button(
            description=f"send {messages_per_click} messages", button_style="primary", icon="paper-plane"
        )
        self.crash_button = widgets.Button(description="crash leader", button_style="danger", icon="bolt")
        self.lose_ack_button = widgets.Button(description="lose next ACK", button_style="warning", icon="envelope")
        self.restart_button = widgets.Button(description="restart broker", icon="redo")
        self.step_button = widgets.Button(description=f"step {step_ms:g} ms", icon="step-forward")
        self.run_button = widgets.Button(description=f"run {run_ms:g} ms", icon="play")
        self.check_button = widgets.Button(description="heal and check", button_style="success", icon="check")
        self.reset_button = widgets.Button(description="new run", icon="trash")
        for name in BUTTONS:  # whole labels: JupyterLab's default button width cut "send 5 messages"
            self.button(name).layout.width = "auto"
        self.try_view = widgets.HTML(self.preset.html(self._descriptions(), self._labels()) if self.preset else "")
        for name, value in (self.preset.settings if self.preset else {}).items():
            self.control(name).value = value  # before the observers: one run starts, below
        self.cluster_view = widgets.HTML()
        self.log_view = widgets.HTML()
        self.wire_view = widgets.HTML()  # the last produce requests and ACKs on the network
        self.outcome_view = widgets.HTML()  # the verdict; until "heal and check", where the run stands
        for control in (
            self.acks,
            self.min_insync,
            self.idempotence,
            self.retries,
            self.in_flight,
            self.lagging_followers,
        ):
            control.observe(lambda change: self.reset(), names="value")
        self.send_button.on_click(lambda _: self.send())
        self.crash_button.on_click(lambda _: self.crash_leader())
        self.lose_ack_button.on_click(lambda _: self.lose_ack())
        self.restart_button.on_click(lambda _: self.restart_broker())
        self.step_button.on_click(lambda _: self.advance(self.step_ms))
        self.run_button.on_click(lambda _: self.advance(self.run_ms))
        self.check_button.on_click(lambda _: self.heal_and_check())
        self.reset_button.on_click(lambda _: self.reset())
        self.widget = widgets.VBox(
            [
                self.try_view,
                widgets.HBox(
                    [
                        widgets.VBox([self.acks, self.min_insync, self.retries, self.in_flight]),
                        widgets.VBox([self.idempotence, self.lagging_followers]),
                    ]
                ),
                widgets.HBox([self.send_button, self.crash_button, self.lose_ack_button, self.restart_button]),
                widgets.HBox([self.step_button, self.run_button, self.check_button, self.reset_button]),
                # the verdict first: after "heal and check" it must be on the first screen (1366x768)
                self.outcome_view,
                widgets.HBox([self.cluster_view, self.log_view]),
                self.wire_view,
            ]
        )
        self.reset()

    # ---- controls by name (presets and tests) -----------------------------------------------
    def control(self, name: str) -> widgets.ValueWidget:
        if name not in CONTROLS:
            raise ValueError(f"no control {name!r}; the controls are {CONTROLS}")
        return getattr(self, name)

    def button(self, name: str) -> widgets.Button:
        if name not in BUTTONS:
            raise ValueError(f"no button {name!r}; the buttons are {BUTTONS}")
        return getattr(self, f"{name}_button")

    def _descriptions(self) -> dict[str, str]:
        return {name: self.control(name).description for name in CONTROLS}

    def _labels(self) -> dict[str, str]:
        return {name: self.button(name).description for name in BUTTONS}

    def follow(self, step: Step) -> str:
        """Do what ``step`` says, as a learner would; return what the app then shows in words:
        the notes it wrote meanwhile and the verdict (if any)."""
        self._captured: list[str] | None = []  # a new run clears self.log: collect the notes here
        try:
            for name, value in step.settings.items():
                self.control(name).value = value
            for name in step.press:
                self.button(name).click()
            notes = self._captured
        finally:
            self._captured = None
        verdict = self.result.summary() if self.result is not None else ""
        return html.unescape(re.sub(r"<[^>]+>", "", " ".join(notes + [verdict])))

    # ---- the run ----------------------------------------------------------------------------
    def producer_config(self) -> dict:
        config = {
            "acks": self.acks.value if self.acks.value == "all" else int(self.acks.value),
            "enable_idempotence": self.idempotence.value,
            "retries": RETRIES[self.retries.value],
            "max_in_flight_requests_per_connection": self.in_flight.value,
            "request_timeout_ms": 1000,
            "delivery_timeout_ms": 10_000,
            "linger_ms": 0,
        }
        return config

    def topic_config(self) -> dict:
        return {"replication_factor": 3, "min_insync_replicas": self.min_insync.value}

    def reset(self) -> None:
        """Start a new run: a fresh 3-broker cluster and producer with the current settings."""
        self.log: list[str] = []
        self.result = None
        self.producer = None
        self.messages_sent = 0
        self.paused: list[int] = []
        # the simulator's backend, so a fault button injects the backend's fault (a row of
        # course_lib.clusters.faults.FAULTS); the widgets read the simulation itself
        self.backend = SimBackend(SimulatedCluster(brokers=3, seed=self.seed, trace=True, **FAST_FAILOVER))
        self.cluster = self.backend.cluster.cluster
        self.cluster.create_topic(TOPIC, **self.topic_config())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.producer = KafkaProducer(bootstrap_servers=self.cluster, **self.producer_config())
        except ConfigurationError as e:
            self._note(f"<b style='color:#c62828'>These settings do not go together:</b> {html.escape(str(e))}")
            self._set_buttons(False)
        else:
            self._set_buttons(True)
            self._note(f"New run: {html.escape(self._describe())}.")
            if self.lagging_followers.value:
                leader = self.cluster.leader_of(TOPIC)
                self.paused = [b for b in self.cluster.broker_ids if b != leader]
                for b in self.paused:
                    self.cluster.pause(b)
                # the leader answers the followers' waiting fetches (empty) after fetch.wait.max.ms;
                # from then on nothing new reaches them until they resume
                self.cluster.run_for(self.cluster.options.replica_fetch_wait_max_ms + 10)
                self._note(f"Followers {self.paused} are paused (lagging); broker {leader} leads alone.")
        self.refresh()

    def _describe(self) -> str:
        c = self.producer_config()
        return (
            f"acks={self.acks.value}, min.insync.replicas={self.min_insync.value}, idempotence "
            f"{'on' if c['enable_idempotence'] else 'off'}, retries {self.retries.value.split()[0]}, "
            f"max in flight {c['max_in_flight_requests_per_connection']}"
        )

    def _set_buttons(self, enabled: bool) -> None:
        for b in (
            self.send_button,
            self.crash_button,
            self.lose_ack_button,
            self.restart_button,
            self.step_button,
            self.run_button,
            self.check_button,
        ):
            b.disabled = not enabled

    def _ready(self) -> bool:
        if self.producer is None:
            return False
        if self.result is not None:  # the last run was checked: a new one starts with the same settings
            self.reset()
        return True

    def send(self) -> None:
        if not self._ready():
            return
        start = self.messages_sent
        for i in range(start, start + self.messages_per_click):
            self.producer.send(TOPIC, f"m-{i}".encode())
        self.messages_sent += self.messages_per_click
        self.cluster.run_for(10)
        self._note(f"Sent m-{start}..m-{self.messages_sent - 1}; after 10 ms {self._progress()}.")
        self.refresh()

    def _progress(self) -> str:
        outcomes = dict.fromkeys(OUTCOMES, 0)
        for op in self.cluster.history:
            if op.f == OpName.SEND and op.type in outcomes:
                outcomes[op.type] += 1
        waiting = self.messages_sent - sum(outcomes.values())
        text = f"{outcomes[OK]} of {self.messages_sent} acknowledged"
        if outcomes[FAIL] + outcomes[INFO]:
            text += f", {outcomes[FAIL] + outcomes[INFO]} failed"
        return text + (f", {waiting} waiting" if waiting else "")

    def crash_leader(self) -> None:
        if not self._ready():
            return
        leader = self.cluster.leader_of(TOPIC)
        if leader is None or not self.cluster.inspect_broker(leader).up:
            self._note("No live leader to crash: restart a broker or run the clock.")
        else:
            self.cluster.crash(leader)
            self._note(f"Broker {leader} (the leader) crashed.")
        for b in self.paused:
            self.cluster.resume(b)
        if self.paused:
            self._note(f"Followers {self.paused} resume.")
        self.paused = []
        if leader is not None:  # let the controller notice (broker session timeout) and elect
            start = self.cluster.now
            self.cluster.run_until(lambda: self.cluster.leader_of(TOPIC) != leader, 10_000)
            new = self.cluster.leader_of(TOPIC)
            epoch = self.cluster.inspect(TOPIC).leader_epoch
            self._note(
                f"After {self.cluster.now - start:.0f} ms the controller elected "
                + (f"broker {new} (leader epoch {epoch})." if new is not None else "nobody: the partition is offline.")
            )
        self.refresh()

    def lose_ack(self) -> None:
        if not self._ready():
            return
        self.backend.lose_next_ack(self.producer, TOPIC)
        self._note("The next produce response (ACK) to the producer will be lost.")
        self.refresh()

    def restart_broker(self) -> None:
        if not self._ready():
            return
        down = [b for b in self.cluster.broker_ids if not self.cluster.inspect_broker(b).up]
        if not down:
            self._note("Every broker is up.")
        else:
            self.cluster.restart(down[0])
            self._note(f"Broker {down[0]} restarted.")
        self.refresh()

    def advance(self, ms: float) -> None:
        if not self._ready():
            return
        self.cluster.run_for(ms)
        self._note(f"Ran the clock {ms:g} ms: {self._progress()}.")
        self.refresh()

    def heal_and_check(self) -> None:
        """Jepsen's end of a run: heal everything, let the producer finish, read the log, check."""
        if self.producer is None or self.result is not None:
            return
        for b in self.paused:
            self.cluster.resume(b)
        self.paused = []
        self._fire_armed_ack()
        self.cluster.heal_all()
        try:
            self.producer.flush()
        except KafkaTimeoutError:  # an idempotent producer wedged by an expired batch, as kafka-python's
            self._note(
                "The idempotent producer lost its producer id to an expired batch: what it still held was never sent."
            )
        self.cluster.final_read(TOPIC)
        self.result = check(self.cluster.history, self.producer_config(), self.topic_config())
        self.outcome_view.value = outcome_html(self.result)
        self._note(
            f"Healed everything; the producer was told: {self._progress()}. Read the whole log and "
            "checked it (the next action starts a new run)."
        )
        self.refresh()

    def _fire_armed_ack(self, limit_ms: float = 30_000) -> None:
        """A lost-ACK fault armed before the ACK was sent (e.g. the followers were lagging, so an
        acks=all write waited) must still fire: healing would silently disarm it. So the clock runs
        until the next ACK comes and is lost, or the producer has nothing left to acknowledge."""
        network = self.cluster.network
        if not network.armed_drops("produce_response"):
            return
        start = self.cluster.now
        self.cluster.run_until(lambda: not network.armed_drops("produce_response") or not self._waiting(), limit_ms)
        if network.armed_drops("produce_response"):
            self._note("The armed lost-ACK fault never fired (no ACK was sent after it); healing disarms it.")
        else:
            self._note(
                f"Before healing: ran the clock {self.cluster.now - start:.0f} ms until the next ACK "
                "was sent; it was lost, as armed."
            )

    def _waiting(self) -> int:
        """Sends the producer has not heard back about yet."""
        done = sum(1 for op in self.cluster.history if op.f == OpName.SEND and op.type in OUTCOMES)
        return self.messages_sent - done

    # ---- display ----------------------------------------------------------------------------
    def _note(self, text: str) -> None:
        self.log.append(f"<li>t={self.cluster.now:.1f} ms: {text}</li>")
        if self._captured is not None:
            self._captured.append(text)

    def _status_html(self) -> str:
        """Before "heal and check": where the run stands, in the verdict's place. It is the first
        thing under the buttons (on the first screen at 1366x768), so a learner sees "0 of 5
        acknowledged" there - and why - rather than only in the log further down."""
        if self.producer is None:
            return "<p class='oc-summary oc-pending'>No run: these settings do not go together (see <b>What happened</b>).</p>"
        if not self.messages_sent:
            return (
                "<p class='oc-summary oc-pending'>Not checked yet: send messages, break something, then press "
                "<b>heal and check</b>.</p>"
            )
        refused = self._refusals()
        why = (
            f" The brokers refuse the writes ({html.escape(', '.join(refused))}); the producer keeps retrying."
            if refused and self._waiting()
            else ""
        )
        return (
            f"<p class='oc-summary oc-pending'>Not checked yet. So far the producer was told: <b>{self._progress()}</b>."
            f"{why} Press <b>heal and check</b> to see what happened to every message.</p>"
        )

    def _refusals(self) -> list[str]:
        """The errors of produce responses since the last acknowledged write (newest run only)."""
        errors: list[str] = []
        for e in reversed(self.cluster.network.trace or []):
            if e.kind == "produce_response" and e.fate == "delivered":
                found = re.findall(r"p\d+:(\w+)", e.label)
                if not found:
                    break
                errors += [name for name in found if name not in errors]
        return errors

    def refresh(self) -> None:
        if self.result is None:
            self.outcome_view.value = self._status_html()
        self.cluster_view.value = cluster_html(self.cluster.state())
        self.wire_view.value = self._wire_html()
        self.log_view.value = (
            "<div class='sim-log' style='margin-left:16px;max-width:480px'><b>What happened</b><ul>"
            + "".join(self.log[-12:])
            + "</ul></div>"
        )

    def _wire_html(self, last: int = 8) -> str:
        """The last produce requests and responses: who sent what, when, and whether it arrived."""
        trace = self.cluster.network.trace or []
        rows = []
        for e in reversed(trace):
            if e.kind in ("produce_request", "produce_response"):
                rows.append(e)
                if len(rows) == last:
                    break
        if not rows:
            return ""
        items = "".join(
            f"<tr data-fate='{_fate(e)}'><td>{e.sent_ms:.1f} ms</td><td>{html.escape(e.src)} &rarr; "
            f"{html.escape(e.dst)}</td><td>{html.escape(e.label)}</td><td style='color:"
            f"{'#2e7d32' if _fate(e) == 'delivered' else '#c62828'}'>{html.escape(_fate(e))}</td></tr>"
            for e in reversed(rows)
        )
        return (
            "<div class='sim-wire'><b>On the wire</b> (last produce requests and ACKs)<table>"
            "<tr><th>sent at</th><th>from &rarr; to</th><th>message</th><th>fate</th></tr>"
            f"{items}</table></div>"
        )

    def _ipython_display_(self):  # pragma: no cover - notebook display
        from IPython.display import display

        display(self.widget)


def _fate(entry) -> str:
    """What became of a message on the wire, in the learner's words. An ACK that carries an error
    (``ack p0:NotEnoughReplicasError``) reached the producer, but it says the write was refused:
    it must not read "delivered" in green, as if the message were."""
    if entry.fate == "delivered" and entry.kind == "produce_response" and "Error" in entry.label:
        return "arrived: write refused"
    return entry.fate
