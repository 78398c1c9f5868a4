"""Single-point source mutations of ``model/``: what ``keos mutate`` changes, one change per mutant.

A mutant is one small edit of one module's syntax tree, of the kinds real protocol defects take:

=================  ==========================================================================================
operator           edit
=================  ==========================================================================================
``relational``     a comparison negated: ``==``/``!=``, ``<``/``>=``, ``>``/``<=``, ``in``/``not in``, ``is``/``is not``
``boundary``       a boundary moved: ``<``/``<=``, ``>``/``>=``
``off_by_one``     an integer constant ±1 (``0`` only +1)
``constant``       ``True``/``False`` swapped
``negate``         the test of an ``if``, ``while`` or conditional expression negated
``drop_condition`` one operand of an ``and``/``or`` dropped
``bool_operator``  ``and``/``or`` swapped
``drop_guard``     an ``if`` whose body exits early (``return``, ``raise``, ``continue``, ``break``) removed:
                   the guard never fires and its ``else`` (if any) always runs
``error_swap``     an ``Errors.X`` code replaced by another one of its class (retriable, authorization,
                   other; ``model/protocol/errors.py``) and by one of each other class
``table_entry``    one entry removed from a dict, set, list or tuple literal of a module- or class-level
                   table (valid previous states, error classes, allowed transitions, ...)
``drop_update``    a state update forgotten: one keyword of a ``x._replace(...)`` call dropped (the only
                   one: the call becomes ``x``), or a statement ``x = <expression of x>`` that rebinds a
                   name from its own old value removed (KAFKA-style "forgot to reset lastProducerEpoch")
=================  ==========================================================================================

Not mutated: docstrings and other strings, annotations, ``__all__``; ``assert`` statements (their
condition and message: an ``assert`` states the model's own internal invariant -- "the handler that
listed this step found its record" -- not a rule of Kafka's; a mutant of one either fails wherever it runs (a
self-evident kill) or only weakens a self-check (no behaviour changes: equivalent), so it measures
nothing, while a defect elsewhere that breaks an ``assert`` is caught as a ``model_contract`` kill,
:mod:`keos.checker.reach.worker`); a statement or expression that
begins on a line marked ``# no mutate: <reason>``, all of it (a ``def`` line so marked keeps the whole
function out: property code such as a ghost observer, listed with its reason by ``keos coverage``);
and the weakened variants of ``model/variants.py`` (a ``Variant(..., weakened=True, ...)`` entry):
they are the fixtures ``keos mutants`` proves the gate catches, not the protocol the scenarios run,
so a mutant of one changes nothing the gate's searches model (the protocol's own switches, the
``ProtocolFlags`` defaults, and the other variants scenarios run, such as ``tv1``, are mutated).

A mutant keeps every line number of its module (the edited tree is compiled, not re-printed), so
coverage data selects the scenarios that reach it and tracebacks point to the real file.  Its id is
``sha256(module, line, column, end line, end column, operator, replacement)`` cut to 12 hex digits:
stable across runs and machines (never ``hash()``).

Standard library only: a mutant's worker process imports this module before ``keos.model``.
mutmut (3.x) and cosmic-ray (8.x) were considered: mutmut mutates only inside functions (tables at module
level are out of its reach), rewrites a copy of the source tree with trampolines and drives pytest;
cosmic-ray runs a test *command* per mutant from its own session database and has no way to select the
scenarios by coverage context or to swap error codes by class.  Both are built around a test suite,
while keos's "test" is a set of explicit searches chosen per mutated line; the operators here are the
protocol-shaped ones the issue asks for.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "NO_MUTATE",
    "OPERATORS",
    "Mutant",
    "apply_mutant",
    "error_classes",
    "model_modules",
    "module_mutants",
    "mutant_id",
]

OPERATORS = (
    "relational",
    "boundary",
    "off_by_one",
    "constant",
    "negate",
    "drop_condition",
    "bool_operator",
    "drop_guard",
    "error_swap",
    "table_entry",
    "drop_update",
)

#: A line not mutated, with its reason: ``# no mutate: <reason>``.
NO_MUTATE = re.compile(r"#\s*no mutate:\s*(?P<reason>.*)$")

_NEGATED: dict[type, type] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BOUNDARY: dict[type, type] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass(frozen=True)
class Mutant:
    """One single-point mutation of one module of ``model/``."""

    id: str
    module: str  #: import name, ``keos.model.log.partition``
    path: str  #: repository-relative file, ``model/log/partition.py``
    folder: str  #: ``model/log`` (``model`` for top-level modules): the unit of the per-folder score
    line: int
    col: int
    end_line: int
    end_col: int
    operator: str
    function: str  #: qualified name of the enclosing function, or ``<module>``
    original: str  #: the node's source, one line, cut to 160 characters
    replacement: str  #: the mutated node, one line, cut to 160 characters

    def to_json(self) -> dict[str, Any]:
        """The mutant as a JSON object."""
        return asdict(self)


def mutant_id(module: str, line: int, col: int, end_line: int, end_col: int, operator: str, replacement: str) -> str:
    """The stable id of a mutant: 12 hex digits of a SHA-256 over what identifies it."""
    key = f"{module}\x00{line}:{col}:{end_line}:{end_col}\x00{operator}\x00{replacement}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- error classes ------------------------------------------------------------------------------


def error_classes(errors_py: Path) -> dict[str, str]:
    """Each ``Errors`` member's class, read (not imported) from ``model/protocol/errors.py``.

    Classes: ``retriable`` (the ``RETRIABLE`` set), ``authorization`` (``AUTHORIZATION_ERRORS``),
    ``none`` (``Errors.NONE``) and ``other`` (fatal or abortable: everything else).
    """
    tree = ast.parse(errors_py.read_text(encoding="utf-8"))
    members: list[str] = []
    sets: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Errors":
            members = [t.id for st in node.body if isinstance(st, ast.Assign) for t in st.targets
                       if isinstance(t, ast.Name)]
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names = {a.attr for a in ast.walk(node.value) if isinstance(a, ast.Attribute)
                     and isinstance(a.value, ast.Name) and a.value.id == "Errors"}
            sets[node.targets[0].id] = names
    out: dict[str, str] = {}
    for m in members:
        if m == "NONE":
            out[m] = "none"
        elif m in sets.get("RETRIABLE", set()):
            out[m] = "retriable"
        elif m in sets.get("AUTHORIZATION_ERRORS", set()):
            out[m] = "authorization"
        else:
            out[m] = "other"
    return out


def _swaps(code: str, classes: dict[str, str]) -> list[str]:
    """Replacements of ``code``: the next member of its class (sorted, cyclic) and the first of each other."""
    mine = classes.get(code)
    if mine is None:
        return []
    by_class: dict[str, list[str]] = {}
    for name, cls in sorted(classes.items()):
        by_class.setdefault(cls, []).append(name)
    out: list[str] = []
    same = by_class[mine]
    if len(same) > 1:
        out.append(same[(same.index(code) + 1) % len(same)])
    for cls, names in sorted(by_class.items()):
        if cls != mine and cls != "none":
            out.append(names[0])
    return out


# -- mutation points ----------------------------------------------------------------------------


@dataclass
class _Point:
    """Where a mutation applies: replace ``getattr(parent, field)[index]`` (or the field) by ``new``."""

    parent: ast.AST
    field: str
    index: int | None
    node: ast.AST
    operator: str
    new: Callable[[], ast.AST | list[ast.stmt]]
    function: str


def _pass(like: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Pass(), like)


class _Walker:
    """Collects mutation points in a fixed (syntax-tree) order."""

    def __init__(self, classes: dict[str, str], skip_lines: set[int]) -> None:
        self.classes = classes
        self.skip_lines = skip_lines
        self.points: list[_Point] = []

    def walk(self, node: ast.AST, scope: list[str], table: bool) -> None:
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        self.visit(node, field, i, child, scope, table)
            elif isinstance(value, ast.AST):
                self.visit(node, field, None, value, scope, table)

    def _add(self, parent: ast.AST, field: str, index: int | None, node: ast.AST, operator: str,
             new: Callable[[], ast.AST | list[ast.stmt]], scope: list[str]) -> None:
        if getattr(node, "lineno", None) in self.skip_lines:
            return
        self.points.append(_Point(parent, field, index, node, operator, new, ".".join(scope) or "<module>"))

    def visit(self, parent: ast.AST, field: str, index: int | None, node: ast.AST, scope: list[str],
              table: bool) -> None:
        if getattr(node, "lineno", None) in self.skip_lines:
            return  # ``# no mutate:``: the whole statement or expression that begins on the line
        if _is_weakened_variant(node):
            return  # a weakened variant: keos mutants' fixture, not the protocol
        if table and field == "slice" and isinstance(parent, ast.Subscript):
            return  # a type expression (``Alias = tuple[str, int]``), not a table: nothing runs it
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring or bare string
        if isinstance(node, ast.Assert):
            return  # the model's own invariant, not Kafka's behaviour: see "Not mutated" above
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return
            if not scope or scope[-1].startswith("class "):
                self.walk(node, scope, True)  # a module- or class-level value: a table
                return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.walk(node, [*scope, node.name], False)
            return
        if isinstance(node, ast.ClassDef):
            self.walk(node, [*scope, f"class {node.name}"], False)
            return
        self._points(parent, field, index, node, scope, table)
        self.walk(node, scope, table)

    def _points(self, parent: ast.AST, field: str, index: int | None, node: ast.AST, scope: list[str],
                table: bool) -> None:
        qual = [s.removeprefix("class ") for s in scope]
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for operator, table_ in (("relational", _NEGATED), ("boundary", _BOUNDARY)):
                    flip = table_.get(type(op))
                    if flip is not None:
                        self._add(parent, field, index, node, operator, _compare(node, i, flip), qual)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                self._add(parent, field, index, node, "constant", _const(node, not node.value), qual)
            elif isinstance(node.value, int):
                for delta in (1, -1):
                    if node.value + delta >= 0:
                        self._add(parent, field, index, node, "off_by_one", _const(node, node.value + delta), qual)
        elif isinstance(node, ast.BoolOp):
            self._add(parent, field, index, node, "bool_operator", _boolop_swap(node), qual)
            for i in range(len(node.values)):
                self._add(parent, field, index, node, "drop_condition", _boolop_drop(node, i), qual)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Errors" \
                and isinstance(node.ctx, ast.Load):
            for other in _swaps(node.attr, self.classes):
                self._add(parent, field, index, node, "error_swap", _attr(node, other), qual)
        elif table and isinstance(node, ast.Dict | ast.Set | ast.List | ast.Tuple):
            n = len(node.keys) if isinstance(node, ast.Dict) else len(node.elts)
            items = node.values if isinstance(node, ast.Dict) else node.elts
            for i in range(n):
                if not _is_weakened_variant(items[i]):
                    self._add(parent, field, index, node, "table_entry", _drop_entry(node, i), qual)
        elif not table and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "_replace" and not node.args:
            for i, kw in enumerate(node.keywords):
                if kw.arg is not None:
                    self._add(parent, field, index, node, "drop_update", _drop_keyword(node, i), qual)
        elif not table and index is not None and isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and any(
                    isinstance(n, ast.Name) and n.id == node.targets[0].id for n in ast.walk(node.value)):
            self._add(parent, field, index, node, "drop_update", _drop_statement(node), qual)
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            self._add(node, "test", None, node.test, "negate", _negate(node.test), qual)
        if isinstance(node, ast.If) and node.body and isinstance(node.body[-1], _EXITS) and index is not None:
            self._add(parent, field, index, node, "drop_guard", _drop_guard(node), qual)


def _is_weakened_variant(node: ast.AST | None) -> bool:
    """A ``Variant(..., weakened=True, ...)`` entry of ``model/variants.py``."""
    return isinstance(node, ast.Call) and any(
        kw.arg == "weakened" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in node.keywords)


def _compare(node: ast.Compare, i: int, flip: type) -> Callable[[], ast.AST]:
    def make() -> ast.AST:
        new = copy.deepcopy(node)
        new.ops[i] = flip()
        return new
    return make


def _const(node: ast.Constant, value: Any) -> Callable[[], ast.AST]:
    return lambda: ast.copy_location(ast.Constant(value=value), node)


def _attr(node: ast.Attribute, name: str) -> Callable[[], ast.AST]:
    def make() -> ast.AST:
        new = copy.deepcopy(node)
        new.attr = name
        return new
    return make


def _boolop_swap(node: ast.BoolOp) -> Callable[[], ast.AST]:
    def make() -> ast.AST:
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return new
    return make


def _boolop_drop(node: ast.BoolOp, i: int) -> Callable[[], ast.AST]:
    def make() -> ast.AST:
        rest = [copy.deepcopy(v) for j, v in enumerate(node.values) if j != i]
        if len(rest) == 1:
            return rest[0]
        return ast.copy_location(ast.BoolOp(op=copy.deepcopy(node.op), values=rest), node)
    return make


def _drop_keyword(node: ast.Call, i: int) -> Callable[[], ast.AST]:
    def make() -> ast.AST:
        new = copy.deepcopy(node)
        del new.keywords[i]
        if not new.keywords:  # x._replace() is x
            assert isinstance(new.func, ast.Attribute)
            return new.func.value
        return new
    return make


def _drop_statement(node: ast.stmt) -> Callable[[], list[ast.stmt]]:
    return lambda: [_pass(node)]


def _negate(test: ast.expr) -> Callable[[], ast.AST]:
    return lambda: ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=copy.deepcopy(test)), test)


def _drop_guard(node: ast.If) -> Callable[[], list[ast.stmt]]:
    return lambda: [copy.deepcopy(s) for s in node.orelse] or [_pass(node)]


def _drop_entry(node: ast.Dict | ast.Set | ast.List | ast.Tuple, i: int) -> Callable[[], ast.AST]:
    def make() -> ast.AST:
        new = copy.deepcopy(node)
        if isinstance(new, ast.Dict):
            del new.keys[i]
            del new.values[i]
            return new
        del new.elts[i]
        if isinstance(new, ast.Set) and not new.elts:  # ``{}`` would be a dict
            return ast.copy_location(ast.Call(func=ast.Name(id="set", ctx=ast.Load()), args=[], keywords=[]), node)
        return new
    return make


# -- generation and application -----------------------------------------------------------------


def _skip_lines(source: str) -> dict[int, str]:
    """Lines marked ``# no mutate: <reason>``, with the reason."""
    out: dict[int, str] = {}
    for n, text in enumerate(source.splitlines(), 1):
        m = NO_MUTATE.search(text)
        if m:
            out[n] = m.group("reason").strip()
    return out


def _points(source: str, classes: dict[str, str]) -> tuple[ast.Module, list[_Point]]:
    tree = ast.parse(source)
    walker = _Walker(classes, set(_skip_lines(source)))
    walker.walk(tree, [], False)
    return tree, walker.points


def _text(new: ast.AST | list[ast.stmt]) -> str:
    if isinstance(new, list):
        return "; ".join(ast.unparse(s) for s in new)
    return ast.unparse(new)


def _pairs(source: str, module: str, classes: dict[str, str]) -> Iterator[tuple[str, _Point, str]]:
    """(id, point, full replacement text) of each distinct mutant, in a fixed order."""
    _, points = _points(source, classes)
    seen: set[str] = set()
    for p in points:
        node = p.node
        original = ast.unparse(node)
        replacement = _text(p.new())
        if replacement == original:
            continue
        mid = mutant_id(module, node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                        node.end_col_offset or 0, p.operator, replacement)  # type: ignore[attr-defined]
        if mid in seen:
            continue
        seen.add(mid)
        yield mid, p, replacement


def module_mutants(source: str, module: str, path: str, classes: dict[str, str]) -> list[Mutant]:
    """Every mutant of one module, in source order of the syntax tree."""
    parts = path.split("/")
    folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    out: list[Mutant] = []
    for mid, p, replacement in _pairs(source, module, classes):
        node = p.node
        out.append(Mutant(
            id=mid, module=module, path=path, folder=folder,
            line=node.lineno, col=node.col_offset,  # type: ignore[attr-defined]
            end_line=node.end_lineno or node.lineno, end_col=node.end_col_offset or 0,  # type: ignore[attr-defined]
            operator=p.operator, function=p.function,
            original=_one_line(ast.unparse(node)), replacement=_one_line(replacement),
        ))
    return out


def apply_mutant(source: str, module: str, mid: str, classes: dict[str, str]) -> ast.Module:
    """The module's syntax tree with mutant ``mid`` applied (a ``KeyError`` if it has no such mutant)."""
    tree, points = _points(source, classes)
    seen: set[str] = set()
    for p in points:
        node = p.node
        original = ast.unparse(node)
        new = p.new()
        replacement = _text(new)
        if replacement == original:
            continue
        this = mutant_id(module, node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                         node.end_col_offset or 0, p.operator, replacement)  # type: ignore[attr-defined]
        if this in seen:
            continue
        seen.add(this)
        if this != mid:
            continue
        container = getattr(p.parent, p.field)
        if p.index is None:
            assert not isinstance(new, list)
            setattr(p.parent, p.field, new)
        elif isinstance(new, list):
            container[p.index:p.index + 1] = new
        else:
            container[p.index] = new
        return ast.fix_missing_locations(tree)
    raise KeyError(f"no mutant {mid} in {module}")


def model_modules(root: Path) -> list[tuple[str, str, Path]]:
    """``(import name, repository-relative path, file)`` of every module of ``root/model``, sorted."""
    model = root / "model"
    out: list[tuple[str, str, Path]] = []
    for f in sorted(model.rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        name = "keos." + rel[:-3].replace("/", ".")
        name = name.removesuffix(".__init__")
        out.append((name, rel, f))
    return out
