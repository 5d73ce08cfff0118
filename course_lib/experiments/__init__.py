"""The experiments: what the course runs and measures, above the seam.

Each module is one family of experiments, written against :mod:`course_lib.backend` and the client
workload contracts of :mod:`course_lib.client_adapters`, never against a cluster or a client:

- :mod:`.scenarios`, :mod:`.consumer_scenarios`, :mod:`.scenario_framework` - the named, seeded
  producer, consumer and transaction scenarios (lessons 02-06);
- :mod:`.matrix` - every experiment x client x cluster, each cell by one code path; its tables
  :mod:`.fidelity` (the scenarios), :mod:`.by_design` (:mod:`.behaviour_probes` where the clients
  differ by design) and :mod:`.protocol_matrix` (lesson 09);
- :mod:`.consumer_protocol_experiments`, :mod:`.protocol_matrix` - KIP-848 consumer groups and
  share groups with the clients that have them;
- :mod:`.share_scenarios`, :mod:`.share_group_experiments`, :mod:`.share_dead_letters`,
  :mod:`.share_leader_failover`, :mod:`.share_renew`, :mod:`.share_implicit`, :mod:`.share_late_acks` - share groups (lesson 05c);
- :mod:`.transaction_versions` - transactions v1 against v2;
- :mod:`.on_kafka` - the measurements that need a real Kafka cluster;
- :mod:`.shared_results` - one expensive result per test run, shared with the notebooks.
"""
