"""``scripts/join_equivalents.py``: several branches' equivalent-mutant lists join claim by claim, so a claim
never loses its reason and no table is declared twice (the failure of a textual merge of the list)."""

from __future__ import annotations

import tomllib
from types import ModuleType

from script_loader import load_script

A = """# header

# -- branch a --

[aaaaaaaaaaaa]
reason = "model/x.py:1: a"

[bbbbbbbbbbbb]
reason = "model/x.py:2: b, first"
"""

B = """# header

# -- branch b --

[bbbbbbbbbbbb]
reason = "model/x.py:2: b, second"

[cccccccccccc]
reason = "model/y.py:3: c"
# a comment inside the claim
"""


def _script() -> ModuleType:
    return load_script("join_equivalents")


def test_claims_split_at_headers_and_section_comments() -> None:
    blocks = _script().claims(B)
    assert list(blocks) == ["bbbbbbbbbbbb", "cccccccccccc"]
    assert "# a comment inside the claim" in blocks["cccccccccccc"]
    assert "branch b" not in blocks["bbbbbbbbbbbb"]


def test_join_keeps_the_first_reason_and_adds_the_new_claims() -> None:
    joined = _script().join([("a", A), ("b", B)])
    table = tomllib.loads(joined)
    assert set(table) == {"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"}
    assert table["bbbbbbbbbbbb"]["reason"].endswith("b, first")
    assert table["cccccccccccc"]["reason"] == "model/y.py:3: c"
    assert "# -- claims joined from b --" in joined
    assert _script().join([("a", A), ("a2", A)]) == A
