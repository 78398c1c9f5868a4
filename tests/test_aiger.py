"""The AIGER circuit of the idempotence core computes the model's step, and its bad outputs fire on violations."""

from __future__ import annotations

import io
from collections import deque
from typing import Any

import pytest
import z3

from keos.checker.bmc.aiger import Aig, bitblast
from keos.checker.bmc.encoding import INVARIANTS
from keos.checker.bmc.fixed import FixedEncoding, circuit
from keos.checker.cli.main import main
from keos.checker.trace import load_trace
from keos.model.interface import Action
from keos.model.protocol.messages import ProduceRequest
from keos.scenarios import build_model, builtin_scenarios


def _path_to(model: Any, goal: Any, limit: int = 20000) -> list[Action]:
    """Actions of a shortest path (BFS) from the initial state to a state satisfying ``goal``."""
    init = model.init_states()[0]
    parent: dict[Any, tuple[Any, Action] | None] = {init: None}
    queue = deque([init])
    while queue and len(parent) < limit:
        s = queue.popleft()
        if goal(s):
            path = []
            while parent[s] is not None:
                s, a = parent[s]  # type: ignore[misc]
                path.append(a)
            return path[::-1]
        for a in model.actions(s):
            n = model.step(s, a).state
            if n not in parent:
                parent[n] = (s, a)
                queue.append(n)
    raise AssertionError("goal not reached")


def _decode(enc: FixedEncoding, frame: dict[str, bool]) -> Any:
    """The ``SystemState`` a circuit frame holds (latch bits -> state vector -> concretised)."""
    values: dict[str, Any] = {}
    for name, boolean in enc.schema.items():
        if boolean:
            values[name] = frame[name]
        else:
            raw = sum(1 << i for i in range(enc.width) if frame[f"{name}[{i}]"])
            values[name] = raw - (1 << enc.width) if raw >= 1 << (enc.width - 1) else raw
    S = enc.state("x")
    solver = z3.Solver()
    solver.add(enc.equal_to(S, values))
    assert solver.check() == z3.sat
    return enc.concretize(solver.model(), S), values


def _inputs(enc: FixedEncoding, values: dict[str, Any], action: Action) -> dict[str, bool]:
    """The circuit inputs (template number ``k``, slot ``m``) that choose ``action`` in a state vector."""
    slot = 0
    if action.kind in ("Deliver", "DropMessage", "DuplicateMessage"):
        env = action.args[0]
        body = env.body
        isreq = isinstance(body, ProduceRequest)
        kind = {"Deliver": "DeliverRequest" if isreq else "DeliverResponse"}.get(action.kind, action.kind)
        args = {"DeliverRequest": (body.partition,), "DuplicateMessage": ()}.get(kind, (body.producer,))
        matches = [j for j in range(enc.K) if values[f"live{j}"] and values[f"m{j}.isreq"] == isreq
                   and values[f"m{j}.prod"] == body.producer and values[f"m{j}.conn"] == env.connection
                   and values[f"m{j}.seq"] == body.base_sequence and values[f"m{j}.ep"] == body.producer_epoch]
        older = {j: sum(bool(values.get(f"ord{b}.{j}")) for b in matches) for j in matches}
        slot = min(matches, key=lambda j: older[j])
    else:
        kind, args = action.kind, action.args
    k = next(i for i, t in enumerate(enc.templates) if (t.kind, t.args) == (kind, tuple(args)))
    bits = {f"k[{i}]": bool((k >> i) & 1) for i in range(enc.width)}
    bits.update({f"m[{i}]": bool((slot >> i) & 1) for i in range(enc.width)})
    return bits


def _run(enc: FixedEncoding, aig: Aig, model: Any, actions: list[Action]) -> list[dict[str, bool]]:
    """Drive the circuit along ``actions``; every frame must decode to the model's state at that step.

    Returns the frames; the inputs used are left in ``_run.inputs`` for the witness test.
    """
    state = model.init_states()[0]
    inputs: list[dict[str, bool]] = []
    for action in actions:
        frames = aig.simulate(inputs)
        decoded, values = _decode(enc, frames[-1])
        assert decoded == _unjudged(state)
        inputs.append(_inputs(enc, values, action))
        state = model.step(state, action).state
    frames = aig.simulate(inputs)
    assert _decode(enc, frames[-1])[0] == _unjudged(state)
    _LAST_INPUTS[:] = inputs
    return frames


_LAST_INPUTS: list[dict[str, bool]] = []

#: Ghost fields where the idempotence system keeps what the judges of properties the circuit does not encode
#: objected to (filled only under a weakened rule): not part of the encoded state.
JUDGED_GHOST = ("wrong_answers", "needless_bumps", "unrestarted", "missed_bumps")


def _unjudged(state: Any) -> Any:
    return state._replace(ghost=state.ghost._replace(**{name: () for name in JUDGED_GHOST}))


@pytest.mark.parametrize(("scenario", "variant", "invariant"), [
    ("idempotence_retry", "no_idempotence", "no_duplicate_append"),
    ("idempotence_retry", "broker_accepts_any_sequence", "per_partition_order"),
])
def test_circuit_follows_a_counterexample_and_flags_it(scenario: str, variant: str, invariant: str) -> None:
    """Along a shortest violation found by BFS, the circuit's state is the model's at every step, and the
    invariant's bad output is 0 until the last state, where it is 1; ``overflow`` stays 0."""
    model = build_model(builtin_scenarios()[scenario], variant)
    prop = next(p for p in model.properties() if p.name == invariant)
    actions = _path_to(model, lambda s: not prop.holds(s))
    enc = FixedEncoding(model)
    aig = circuit(enc, [invariant])
    frames = _run(enc, aig, model, actions)
    assert [f[f"bad:{invariant}"] for f in frames] == [False] * len(actions) + [True]
    assert not any(f["bad:overflow"] for f in frames)


def test_circuit_follows_the_real_protocol_through_faults() -> None:
    """A long run of the real protocol (a leader failover with acknowledged data) decodes step by step, and no
    invariant's bad output fires."""
    model = build_model(builtin_scenarios()["idempotence_retry"], "kafka")
    actions = _path_to(model, lambda s: any(f > 0 for f in s.faults_used) and len(s.ghost.acked) == 2)
    assert len(actions) >= 8
    enc = FixedEncoding(model)
    aig = circuit(enc, list(INVARIANTS))
    frames = _run(enc, aig, model, actions)
    assert not any(f[k] for f in frames for k in f if k.startswith("bad:"))


def test_written_file_is_binary_aiger_with_symbols() -> None:
    """Header counts, one reset-valued latch line per latch, the bad literals, then the symbol table."""
    aig = Aig()
    x = aig.input("x")
    s = aig.latch("s", True)
    aig.set_next("s", aig.AND(s, x ^ 1))
    aig.add_bad("both", aig.AND(s, x))
    buf = io.BytesIO()
    aig.write(buf, ["made by a test"])
    data = buf.getvalue()
    assert data.startswith(b"aig 4 1 1 0 2 1\n")  # x is variable 1, s is 2, the gates 3 and 4
    lines = data.split(b"\n")
    assert lines[1:3] == [b"6 1", b"8"]  # s: next = gate 3, reset 1; bad: gate 4
    assert b"i0 x\nl0 s\nb0 both\nc\nmade by a test\n" in data
    frames = aig.simulate([{"x": False}, {"x": True}])
    assert [f["s"] for f in frames] == [True, True, False]
    assert [f["bad:both"] for f in frames] == [False, True, False]


def test_bitblast_keeps_each_formula_equivalent() -> None:
    """Bit-vector formulas over Boolean-built words come back over the Booleans only, equivalent."""
    a = [z3.Bool(f"a{i}") for i in range(3)]
    word = z3.Concat([z3.If(b, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)) for b in reversed(a)])
    formulas = {"lt5": z3.ULT(word, 5), "odd": z3.Extract(0, 0, word) == 1, "const": word == word}
    out = bitblast(formulas)
    aig = Aig()
    env = {str(b): aig.input(str(b)) for b in a}
    for name, f in out.items():
        aig.add_bad(name, aig.from_z3(f, env))
    for v in range(8):
        frame = aig.simulate([{f"a{i}": bool((v >> i) & 1) for i in range(3)}])[0]
        assert frame["bad:lt5"] == (v < 5) and frame["bad:odd"] == bool(v & 1) and frame["bad:const"]


def test_export_aiger_command(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``keos export-aiger`` writes the circuit; a transactions scenario is refused with exit code 2."""
    out = tmp_path / "retry.aig"
    assert main(["export-aiger", "--scenario", "idempotence_retry", "--output", str(out)]) == 0
    head = out.read_bytes().split(b"\n", 1)[0].split()
    assert head[0] == b"aig" and int(head[6]) == 1 + len(INVARIANTS)  # aig M I L O A B
    assert b"b0 overflow" in out.read_bytes()
    assert main(["export-aiger", "--scenario", "txn_kafka_17754_delayed_endtxn", "--output", str(out)]) == 2
    assert "idempotence" in capsys.readouterr().err


def test_import_witness_turns_a_circuit_counterexample_into_a_replayed_trace(tmp_path: Any) -> None:
    """A witness in the AIGER format (as ``berkeley-abc``'s ``write_cex -a`` writes it, made here from a BFS
    counterexample driven through the circuit) becomes a trace that replays; for the real protocol the same
    witness violates nothing and is refused (exit 2)."""
    model = build_model(builtin_scenarios()["idempotence_retry"], "no_idempotence")
    prop = next(p for p in model.properties() if p.name == "no_duplicate_append")
    actions = _path_to(model, lambda s: not prop.holds(s))
    enc = FixedEncoding(model)
    aig = circuit(enc, list(INVARIANTS))
    _run(enc, aig, model, actions)
    names = [name for name, _ in aig.inputs]
    rows = ["".join("1" if frame.get(n) else "0" for n in names) for frame in _LAST_INPUTS]
    latches = "".join(str(int(la.reset)) for la in aig.latches)
    witness = tmp_path / "w.cex"
    witness.write_text("\n".join([latches, *rows, "0" * len(names) + "# DONE"]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["import-witness", str(witness), "--scenario", "idempotence_retry", "--out", str(out)]
    assert main([*args, "--variant", "no_idempotence"]) == 1
    trace = out / "aiger-witness" / "idempotence_retry" / "no_idempotence" / "no_duplicate_append.trace.json"
    assert main(["replay", str(trace)]) == 1  # CONFIRMED
    assert len(load_trace(trace)["actions"]) == len(actions)
    assert main(args) == 2
    circuit_file = tmp_path / "retry.aig"  # the settings recorded by export-aiger stand in for the flags
    assert main(["export-aiger", "--scenario", "idempotence_retry", "--variant", "no_idempotence",
                 "--output", str(circuit_file)]) == 0
    assert main(["import-witness", str(witness), "--circuit", str(circuit_file), "--out", str(out)]) == 1
    assert main(["import-witness", str(witness), "--circuit", str(witness)]) == 2  # not a circuit
    assert main(["import-witness", str(witness)]) == 2  # neither --scenario nor --circuit
    witness.write_text("0101\n", encoding="utf-8")
    assert main([*args, "--variant", "no_idempotence"]) == 2
