"""Widgets and plots for the course: cluster view, delivery simulator, space-time diagrams,
outcome tables, trade-off charts and the prediction widget (ipywidgets 8 + matplotlib).

Taught in notebooks/01_replicated_log to notebooks/07_exactly_once_external (and 05b, 05c).
"""

from .cluster_view import ClusterView, cluster_html, cluster_text
from .consumers import ConsumerCrashDemo, TransactionsDemo, matrix_text, processing_counts, semantics_matrix
from .groups import GroupDemo
from .shares import ShareDemo
from .outcome import outcome_html, outcome_text
from .predict import Prediction
from .simulator import DeliverySimulator
from .timeline import messages, space_time
from .tradeoffs import duplicates_vs_idempotence, latency_by_semantics, loss_vs_acks, plot_rates

__all__ = [
    "ClusterView",
    "cluster_html",
    "cluster_text",
    "outcome_html",
    "outcome_text",
    "DeliverySimulator",
    "Prediction",
    "messages",
    "space_time",
    "loss_vs_acks",
    "duplicates_vs_idempotence",
    "latency_by_semantics",
    "plot_rates",
    "ConsumerCrashDemo",
    "TransactionsDemo",
    "GroupDemo",
    "ShareDemo",
    "semantics_matrix",
    "matrix_text",
    "processing_counts",
]
