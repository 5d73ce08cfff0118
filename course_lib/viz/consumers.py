"""Consumer-side views: the semantics × crash-point matrix, the consumer-crash demo and the
transactions demo (both Voila apps in notebooks/demos).

>>> app = ConsumerCrashDemo(seed=1)
>>> app.semantics.value = "at-most-once"; app.crash_point.value = "after_commit"
>>> app.crash_button.click()
>>> app.counts["never processed"], app.counts["processed twice or more"]
(5, 0)

A lesson starts the crash demo with a preset (``ConsumerCrashDemo(preset="commit_order")``; the
names are in ``CRASH_PRESETS``): its starting choices and the steps to try, shown above it.

Taught in notebooks/05_consumer_delivery_semantics to notebooks/07_exactly_once_external.
"""

from __future__ import annotations

import html
import re
import warnings
from collections import Counter

import ipywidgets as widgets

from ..application.processing import CRASH_POINTS, INPUT, SEMANTICS, run_pipeline
from .log_markers import log_html
from .offsets import crash_offsets, offsets_html
from .presets import Preset, PresetApp, Step, lookup

# The crash moments that are distinct for each consumer (processing.Processor.run): at-most-once
# commits before processing, at-least-once after; auto-commit and the external store commit no
# batch of their own, so "after committing" would be the same moment as "after processing".
CRASH_MOMENTS = {
    "at-most-once": {
        "after_poll": "right after poll(), before committing",
        "after_commit": "after committing, before processing",
        "mid_batch": "halfway through processing (the batch is already committed)",
        "after_process": "after processing the committed batch",
    },
    "at-least-once": {
        "after_poll": "right after poll()",
        "mid_batch": "halfway through the batch",
        "after_process": "after processing, before committing",
        "after_commit": "after committing the processed batch",
    },
    "auto-commit": {
        "after_poll": "right after poll() (auto-commit may already have committed it)",
        "mid_batch": "halfway through the batch",
        "after_process": "after processing (the next poll() auto-commits)",
    },
    "exactly-once-external": {
        "after_poll": "right after poll()",
        "mid_batch": "halfway through the batch",
        "after_process": "after processing (each row was stored with its offset)",
    },
    "exactly-once-kafka": {
        "after_poll": "right after poll()",
        "mid_batch": "halfway through the batch",
        "after_process": "after processing, before committing the transaction",
        "after_commit": "after committing the transaction",
    },
}
SEMANTICS_LABELS = {
    "at-most-once": "at-most-once (commit, then process)",
    "at-least-once": "at-least-once (process, then commit)",
    "auto-commit": "auto-commit (enable_auto_commit=True)",
    "exactly-once-external": "exactly-once: output + offset in one database transaction",
    "exactly-once-kafka": "exactly-once: Kafka transaction (read_committed)",
}

# One per lesson; every step's `expect` is asserted by tests/test_viz_presets.py.
CRASH_PRESETS = {
    "commit_order": Preset(
        "commit first, or process first? (lesson 05)",
        {"semantics": "at-least-once", "crash_point": "after_process"},
        (
            Step(("crash",), "Lost or duplicated, and how many?", ("5 messages processed more than once",)),
            Step(
                ("crash",),
                "And now?",
                ("5 messages never processed",),
                {"semantics": "at-most-once", "crash_point": "after_commit"},
            ),
            Step(
                ("crash",),
                "Auto-commit: lost or duplicated here?",
                ("5 messages processed more than once",),
                {"semantics": "auto-commit", "crash_point": "after_process"},
            ),
        ),
    ),
    "external_store": Preset(
        "offsets stored with the output (lesson 07)",
        {"semantics": "at-least-once", "crash_point": "mid_batch"},
        (
            Step(("crash",), "How many rows are written twice?", ("2 messages processed more than once",)),
            Step(
                ("crash",),
                "The same crash, with the offset in the sink's transaction?",
                ("processed exactly once",),
                {"semantics": "exactly-once-external"},
            ),
        ),
    ),
}
# The transactions demo has no settings: its preset is the order of the buttons (lesson 06).
TX_PRESETS = {
    "markers_and_lso": Preset(
        "commit, abort, leave open, time out (lesson 06)",
        {},
        (
            Step(
                ("commit",), "What does each consumer see, and where are the HW and the LSO?", ("last stable offset 4",)
            ),
            Step(
                ("abort",),
                "Which consumer sees t2? Why is the log end offset 8 after 6 records?",
                ("log end offset 8", "read_committed consumer sees t1-0, t1-1, t1-2 read_uncommitted"),
            ),
            Step(("open",), "The HW moves on: does the LSO?", ("high watermark 11, last stable offset 8",)),
            Step(("timeout",), "What happens to the producer's late commit?", ("ProducerFencedError",)),
        ),
    ),
}
TX_BUTTONS = ("commit", "abort", "open", "timeout", "reset")
CRASH_CONTROLS = ("semantics", "crash_point")
CRASH_BUTTONS = ("crash", "run")


class ProcessingCounts(dict):
    """A dict (``counts["never processed"]``) that prints as a sentence, not as ``{'input ...}``.

    >>> c = ProcessingCounts({"input messages": 20, "processed once": 15, "never processed": 0,
    ...                       "processed twice or more": 5})
    >>> print(c)
    20 input messages: 15 processed once, 0 never processed, 5 processed twice or more
    >>> c["processed twice or more"], c == dict(c)
    (5, True)
    """

    def __str__(self) -> str:
        rest = ", ".join(f"{v} {k}" for k, v in self.items() if k != "input messages")
        return f"{self['input messages']} input messages: {rest}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<span class='processing-counts'>{html.escape(str(self))}</span>"


def processing_counts(pipeline) -> ProcessingCounts:
    """How many input messages were processed once, never, or more than once."""
    result = pipeline.result
    lost = len(result.by_kind("lost_in_processing"))
    dup = len(result.by_kind("duplicate_processing"))
    sent = sum(1 for m in result.messages.values() if m.topic == INPUT)  # not the transactional outputs
    return ProcessingCounts(
        {
            "input messages": sent,
            "processed once": sent - lost - dup,
            "never processed": lost,
            "processed twice or more": dup,
        }
    )


def semantics_matrix(seed: int = 1, semantics=SEMANTICS, crash_points=CRASH_POINTS) -> dict:
    """``{semantics: {crash point: (never processed, processed twice)}}`` for one crash each."""
    table = {}
    for s in semantics:
        table[s] = {}
        for cp in crash_points:
            c = processing_counts(run_pipeline(s, cp, seed=seed))
            table[s][cp] = (c["never processed"], c["processed twice or more"])
    return table


def matrix_text(table: dict) -> str:
    points = list(next(iter(table.values())))
    lines = [f"{'(never, twice)':<24}" + "".join(f"{p:>15}" for p in points)]
    for s, row in table.items():
        lines.append(f"{s:<24}" + "".join(f"{str(row[p]):>15}" for p in points))
    return "\n".join(lines)


class ConsumerCrashDemo(PresetApp):
    """Pick how the consumer commits, pick where it crashes, press the button, count the output."""

    CONTROLS, BUTTONS = CRASH_CONTROLS, CRASH_BUTTONS

    def __init__(self, seed: int = 1, preset: str | None = None):
        """``preset``: a name from ``CRASH_PRESETS`` (a lesson's starting choices and steps to try)."""
        self.preset = lookup(CRASH_PRESETS, preset, "ConsumerCrashDemo")
        self.seed = seed
        style = {"description_width": "120px"}
        self.semantics = widgets.Dropdown(
            options=[(v, k) for k, v in SEMANTICS_LABELS.items()],
            value="at-least-once",
            description="consumer",
            style=style,
            layout=widgets.Layout(width="520px"),
        )
        self.crash_point = widgets.Dropdown(description="crash it", style=style, layout=widgets.Layout(width="520px"))
        self._offer_crash_moments()
        self.semantics.observe(lambda change: self._offer_crash_moments(), names="value")
        for name, value in (self.preset.settings if self.preset else {}).items():
            self.control(name).value = value
        self.crash_button = widgets.Button(description="crash consumer", button_style="danger", icon="bolt")
        self.run_button = widgets.Button(description="run without a crash", icon="play")
        self.view = widgets.HTML(
            "<p class='cc-summary'>Choose a consumer and a crash point, then press <b>crash consumer</b>.</p>"
        )
        self.crash_button.on_click(lambda _: self.run(self.crash_point.value))
        self.run_button.on_click(lambda _: self.run(None))
        self.crash_button.layout.width = self.run_button.layout.width = "auto"
        self.counts: dict = {}
        self.pipeline = None
        self.try_view = widgets.HTML(
            self.preset.html(
                {n: self.control(n).description for n in CRASH_CONTROLS},
                {n: self.button(n).description for n in CRASH_BUTTONS},
                self._shown,
            )
            if self.preset
            else ""
        )
        self.widget = widgets.VBox(
            [
                self.try_view,
                self.semantics,
                self.crash_point,
                widgets.HBox([self.crash_button, self.run_button]),
                self.view,
            ]
        )

    @staticmethod
    def _shown(name: str, value, state: dict) -> str:
        """A choice as its dropdown shows it (crash moments are worded per consumer)."""
        if name == "semantics":
            return SEMANTICS_LABELS[value]
        return CRASH_MOMENTS[state["semantics"]][value]

    def _offer_crash_moments(self) -> None:
        """Only the moments this consumer has; keep the chosen one if it still exists."""
        moments = CRASH_MOMENTS[self.semantics.value]
        keep = self.crash_point.value if self.crash_point.value in moments else None
        self.crash_point.options = [(label, point) for point, label in moments.items()]
        self.crash_point.value = keep or ("after_process" if "after_process" in moments else next(iter(moments)))

    def run(self, crash_point) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.pipeline = run_pipeline(self.semantics.value, crash_point, seed=self.seed)
        except ModuleNotFoundError as e:
            if e.name != "sqlite3":
                raise
            # the offline copy of the site: its Pyodide (npm's) has no SQLite
            self.view.value = (
                "<p class='cc-summary' style='color:#c62828'><b>This copy of the course has no SQLite, and this "
                "consumer stores its output and offsets in a SQLite database.</b> The other consumers work "
                "here; this one works in the course's online site or in JupyterLab (<code>make lab</code>).</p>"
            )
            return
        self.counts = processing_counts(self.pipeline)
        result = self.pipeline.result
        colour = "#2e7d32" if not result.found else ("#ef6c00" if result.valid else "#c62828")
        rows = "".join(
            f"<tr data-count='{html.escape(k)}'><td>{html.escape(k)}</td>"
            f"<td class='cc-count' style='text-align:right;padding-left:12px'>{v}</td></tr>"
            for k, v in self.counts.items()
        )
        output = Counter(self.pipeline.sink)
        # numeric order: msg-2 before msg-10
        twice = sorted((m for m, n in output.items() if n > 1), key=lambda m: (len(m), m))
        where = (
            "no crash"
            if crash_point is None
            else f"crashed {CRASH_MOMENTS[self.semantics.value][crash_point]}, then restarted"
        )
        topic = self.pipeline.notes["names"]["input"]
        partitions = self.pipeline.cluster.topic_config(topic).partitions
        # the consumer's outcome first; the checker's sentence is about the producer's log too
        verdict = (
            f"Every one of the {self.counts['input messages']} input messages was processed exactly once."
            if not result.found
            else result.summary()
        )
        self.view.value = (
            f"<p class='cc-summary' style='color:{colour}'><b>{html.escape(verdict)}</b></p>"
            f"<p>{html.escape(SEMANTICS_LABELS[self.semantics.value])}; {where}. The input topic "
            f"has {partitions} partitions; the consumer reads both, in batches.</p>"
            # lesson 05's figure: where the restarted instance resumed, and what that did
            + (offsets_html(crash_offsets(self.pipeline)) if crash_point is not None else "")
            + f"<table>{rows}</table>"
            + (f"<p>in the output twice: {html.escape(', '.join(twice))}</p>" if twice else "")
        )

    def _ipython_display_(self):  # pragma: no cover
        from IPython.display import display

        display(self.widget)


class TransactionsDemo(PresetApp):
    """A transactional producer commits, aborts or leaves transactions open; two consumers read
    the partition, one ``read_committed`` and one ``read_uncommitted``.

    >>> app = TransactionsDemo(seed=1)
    >>> app.commit_button.click(); app.abort_button.click(); app.commit_button.click()
    >>> app.seen["read_committed"], len(app.seen["read_uncommitted"])
    (['t1-0', 't1-1', 't1-2', 't3-0', 't3-1', 't3-2'], 9)
    """

    BUTTONS = TX_BUTTONS

    def __init__(self, seed: int = 1, per_transaction: int = 3, preset: str | None = None):
        """``preset``: a name from ``TX_PRESETS`` (the steps a lesson asks to try, shown above)."""
        self.preset = lookup(TX_PRESETS, preset, "TransactionsDemo")
        self.seed, self.per_transaction = seed, per_transaction
        self.commit_button = widgets.Button(description="commit a transaction", button_style="success", icon="check")
        self.abort_button = widgets.Button(description="abort a transaction", button_style="danger", icon="times")
        self.open_button = widgets.Button(description="leave one open", button_style="warning", icon="hourglass")
        self.timeout_button = widgets.Button(description="wait for the timeout", icon="clock")
        self.reset_button = widgets.Button(description="start over", icon="trash")
        self.view = widgets.HTML()
        self.commit_button.on_click(lambda _: self.transaction("commit"))
        self.abort_button.on_click(lambda _: self.transaction("abort"))
        self.open_button.on_click(lambda _: self.transaction("open"))
        self.timeout_button.on_click(lambda _: self.wait_for_timeout())
        self.reset_button.on_click(lambda _: self.reset())
        for b in (self.commit_button, self.abort_button, self.open_button, self.timeout_button, self.reset_button):
            b.layout.width = "auto"  # whole labels, never "commit a transa..."
        labels = {n: self.button(n).description for n in TX_BUTTONS}
        self.try_view = widgets.HTML(self.preset.html({}, labels) if self.preset else "")
        self.widget = widgets.VBox(
            [
                self.try_view,
                widgets.HBox([self.commit_button, self.abort_button, self.open_button]),
                widgets.HBox([self.timeout_button, self.reset_button]),
                self.view,
            ]
        )
        self.reset()

    def follow(self, step: Step) -> str:
        """Press what ``step`` says; return the view in words (limits, what each consumer sees, events)."""
        for name in step.press:
            self.button(name).click()
        words = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", self.view.value)).split())
        return re.sub(r" ([,.])", r"\1", words)

    def reset(self) -> None:
        from ..broker import Cluster
        from ..clients import KafkaProducer

        self.cluster = Cluster(
            brokers=3, seed=self.seed, transaction_abort_timed_out_transaction_cleanup_interval_ms=1000
        )
        self.cluster.create_topic("payments", min_insync_replicas=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.producer = KafkaProducer(
                bootstrap_servers=self.cluster, transactional_id="payments-writer", transaction_timeout_ms=5000
            )
        self.producer.init_transactions()
        self.count, self.open, self.fenced = 0, False, False
        self.events: list[str] = []
        self.error = None
        self.refresh()

    def transaction(self, how: str) -> None:
        if self.open:
            self.events.append("A transaction is still open: wait for its timeout (or start over).")
            return self.refresh()
        self.count += 1
        self.producer.begin_transaction()
        for i in range(self.per_transaction):
            self.producer.send("payments", f"t{self.count}-{i}".encode())
        self.producer.flush()
        if how == "commit":
            self.producer.commit_transaction()
            self.events.append(f"Transaction t{self.count}: {self.per_transaction} records written, committed.")
        elif how == "abort":
            self.producer.abort_transaction()
            self.events.append(f"Transaction t{self.count}: {self.per_transaction} records written, aborted.")
        else:
            self.open = True
            self.events.append(
                f"Transaction t{self.count}: {self.per_transaction} records written; the producer "
                f"hangs without committing."
            )
        self.cluster.run_for(50)
        self.refresh()

    def wait_for_timeout(self) -> None:
        self.cluster.run_for(8000)
        if self.open:
            try:
                self.producer.commit_transaction()
                self.events.append("The late commit went through.")
            except Exception as exc:  # the coordinator aborted it and bumped the epoch
                self.events.append(
                    f"After transaction.timeout.ms the coordinator aborted t{self.count}; the "
                    f"producer's late commit failed with {type(exc).__name__}."
                )
            self.open = False
            self.fenced = True  # this producer's epoch is stale: start over
        else:
            self.events.append("Waited 8 s; nothing was open.")
        self.refresh()

    def _read(self, isolation_level: str) -> list[str]:
        """What a fresh consumer with this isolation level reads from the start (simulated polls
        take a little virtual time, as real ones do)."""
        from ..clients import KafkaConsumer

        consumer = KafkaConsumer(
            bootstrap_servers=self.cluster, isolation_level=isolation_level, auto_offset_reset="earliest"
        )
        consumer.assign([("payments", 0)])
        seen = []
        for _ in range(3):
            for records in consumer.poll(timeout_ms=50).values():
                seen += [r.value.decode() for r in records]
        consumer.close()
        return seen

    def refresh(self) -> None:
        for b in (self.commit_button, self.abort_button, self.open_button):
            b.disabled = self.fenced
        view = self.cluster.inspect("payments")
        leader, lso = view.replica(view.leader), view.lso
        self.seen = {level: self._read(level) for level in ("read_committed", "read_uncommitted")}
        items = "".join(f"<li>{html.escape(e)}</li>" for e in self.events[-8:])
        self.view.value = (
            f"<div class='tx-view'><p>log end offset <b class='tx-leo'>{leader.leo}</b>, high watermark "
            f"<b class='tx-hw'>{leader.hw}</b>, last stable offset <b class='tx-lso'>{lso}</b> "
            f"(commit/abort markers take an offset each)</p>"
            f"<p><b>read_committed</b> consumer sees <span class='tx-committed'>"
            f"{html.escape(', '.join(self.seen['read_committed']) or '(nothing)')}</span></p>"
            f"<p><b>read_uncommitted</b> consumer sees <span class='tx-uncommitted'>"
            f"{html.escape(', '.join(self.seen['read_uncommitted']) or '(nothing)')}</span></p>"
            + log_html(self.cluster, "payments")  # lesson 06's figure: records, markers, LSO and HW
            + f"<ul>{items}</ul></div>"
        )

    def _ipython_display_(self):  # pragma: no cover
        from IPython.display import display

        display(self.widget)
