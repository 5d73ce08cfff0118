"""Experiments that measure a real Kafka cluster (:class:`course_lib.real.LocalCluster` or a
remote one): consumer groups (:mod:`.groups`), share groups (:mod:`.share_groups`) and what each
delivery guarantee costs (:mod:`.measure`)."""
