"""Differential testing of the model against a real Kafka broker, request by request (issue 26).

``wire`` encodes Kafka's requests with kio (types generated from Kafka's JSON message schemas),
``sides`` puts the model's handlers and a broker behind one interface, ``cases`` derives request
sequences from the model's state space, ``runner`` compares both after every step and shrinks
every difference.  The CLI is ``keos differential`` (``checker/cli/differential.py``).
"""
