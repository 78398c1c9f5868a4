"""The symbolic engine: bounded model checking, k-induction and proofs with z3, and the AIGER export."""
