"""The consuming application the experiments run: a processor with a sink, crash points and
restarts (:mod:`.processing`), its supervisor (:mod:`.supervisor`) and consumer-group instances on
one clock (:mod:`.consumer_groups`). Above the seam: it reaches a cluster through
:mod:`course_lib.backend` only."""
