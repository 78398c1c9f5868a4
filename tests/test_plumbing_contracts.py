"""Contracts of the plumbing every engine relies on, which no scenario can judge (issue 23, h23-connect).

``keos mutate --scenarios-only`` judges a mutant on the scenarios only, so a defect in these shared helpers that
changes no verdict of a *correct* model -- a state encoding that is still injective, a wildcard event that matches
too much -- survives there; these cheap tests pin the contract instead (milliseconds, no search):

* :func:`keos.model.codec.canonical` is the documented text encoding behind every fingerprint a trace file, the
  liveness lasso check and the bmc engines compare: fingerprints written by one run must equal those recomputed by
  another, so the exact text is the contract (every scalar kind, a nested tuple, a record by class name).
* :meth:`keos.model.interface.Property.matches_event`: an ``event`` ending in ``*`` is a prefix, any other must be
  equal.  A wildcard that matched every event would satisfy every ``sometimes`` partner written with one (for
  instance ``forged_produce_attempted``, ``adversary:produce:*``) in a weakened model too, so the partner could no
  longer say "this scenario never reached the attack" -- a mechanism of every strict gate run.
"""

from __future__ import annotations

from keos.model import codec
from keos.model.interface import Expectation, Property
from keos.model.network import Envelope, channel_heads


def test_canonical_text_is_stable() -> None:
    value = (None, True, False, 7, "x", (1, ()), Envelope("client-0", "broker", 1, ("req", False)))
    assert codec.canonical(value) == (
        "(None,True,False,7,'x',(1,(),),Envelope('client-0','broker',1,('req',False,),),)"
    )
    assert codec.fingerprint(value) == "421f23992be4f75a"
    for scalar, text in ((False, "False"), (True, "True"), (None, "None"), (0, "0"), ("", "''")):
        assert codec.canonical(scalar) == text


def _event_property(event: str) -> Property:
    return Property(name="p", expectation=Expectation.SOMETIMES, fact="f", source="s", catches="c", event=event)


def test_matches_event_prefix_and_exact() -> None:
    wild = _event_property("adversary:produce:*")
    assert wild.matches_event("adversary:produce:forge")
    assert wild.matches_event("adversary:produce:")
    assert not wild.matches_event("adversary:forge_marker:commit")
    assert not wild.matches_event("client_error:TOPIC_AUTHORIZATION_FAILED")
    exact = _event_property("timeout_abort")
    assert exact.matches_event("timeout_abort")
    assert not exact.matches_event("timeout_abort_late")
    assert not _event_property("").matches_event("x")


def test_channel_heads_memo_returns_fresh_equal_lists() -> None:
    a0, a1 = Envelope("c", "b", 0, 1), Envelope("c", "b", 0, 2)
    b0 = Envelope("b", "c", 0, 3)
    network = (a0, a1, b0)
    first = channel_heads(network)
    assert first == [a0, b0]
    first.append(a1)  # a caller may change its list: the memo must not serve the changed one
    assert channel_heads(network) == [a0, b0]
    assert channel_heads((a1, b0)) == [a1, b0]
