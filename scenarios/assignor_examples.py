"""User-supplied assignors, as a scenario names them (``"keos.scenarios.assignor_examples:broadcast"``).

Both are the book's examples of a custom ``ConsumerPartitionAssignor`` (an
``AbstractPartitionAssignor`` subclass overriding ``assign``), written as the plain functions keos
expects: ``assign(partitions_per_topic, subscriptions) -> {member: partitions}``.

* :func:`random_assign` gives each partition of a topic to a random subscriber (seeded, so runs
  are reproducible); every partition is still assigned exactly once, but balance is luck.
* :func:`broadcast` gives every subscriber *all* partitions of its topics ("consumption broadcast
  inside the group").  It breaks the one-owner-per-partition rule: members overwrite each other's
  committed offsets, so a restarted member skips or re-reads records — ``keos assignors`` reports
  the ``exactly_once`` violation.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from keos.model.coordinator.group.assignors import Subscription, TopicPartition, partitions_of


def random_assign(partitions_per_topic: Mapping[str, int],
                  subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    rng = random.Random(20)  # an explicit seed: same input, same assignment
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
    for topic in sorted(partitions_per_topic):
        members = sorted(m for m, s in subscriptions.items() if topic in s.topics)
        if not members:
            continue
        for tp in partitions_of(topic, partitions_per_topic[topic]):
            assignment[rng.choice(members)].append(tp)
    return assignment


def broadcast(partitions_per_topic: Mapping[str, int],
              subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    return {m: [tp for t in sorted(s.topics) if t in partitions_per_topic
                for tp in partitions_of(t, partitions_per_topic[t])]
            for m, s in subscriptions.items()}
