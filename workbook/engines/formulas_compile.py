"""Compile a formula with the ``formulas`` package and call it cheaply, many times.

``formulas.Parser(True).ast(text)[1].compile()`` (what ``formulas.ExcelModel``
does for each cell) parses the formula and builds a schedula ``DispatchPipe``
whose nodes are ``formulas``' own implementations of the Excel operators and
functions. Calling that pipe costs about 0.4 ms of schedula bookkeeping, so
:class:`Compiled` also records the pipe's evaluation order once and replays
it as plain calls of the same node functions and filters (2-3x faster). The
replay is used only for pipes made of plain single-output function nodes; if
it raises or produces no value, the real pipe is called instead, so error
semantics stay those of ``formulas``.

:func:`make_template` ties the pipe's inputs (``"PLAN!F176"``, ``"C_GB"``, ...)
to the references that :func:`formulas_refs.scan` found in the text, so that
one compiled function serves every copy of a formula.
"""

from __future__ import annotations

from dataclasses import dataclass

import schedula as sh

from .formulas_refs import Occurrence


class Unsupported(Exception):
    """The fast route cannot evaluate this workbook (the caller falls back to ExcelModel)."""


@dataclass
class Compiled:
    """A compiled formula: ``fn(*args)`` with one argument per name in ``keys``."""

    pipe: object  # schedula DispatchPipe
    keys: list[str]
    plan: list[tuple] | None
    defaults: dict
    out: str
    needs_cell: bool = False  # ROW(), COLUMN(), @: the result depends on the formula's own cell
    fallbacks: int = 0

    def __call__(self, *args: object) -> object:
        if self.plan is not None:
            try:
                res = self._replay(args)
                if res is not sh.NONE:
                    return res
            except Exception:  # anything odd: let schedula evaluate it as formulas does
                pass
            self.fallbacks += 1
        return self.call_pipe(*args)

    def call_pipe(self, *args: object) -> object:
        """Evaluate through the DispatchPipe (what ``formulas.cell.CellWrapper`` does)."""
        from formulas.tokens.operand import Error

        try:
            return self.pipe(*args)
        except sh.DispatcherError as ex:
            if isinstance(ex.ex, NotImplementedError):
                return Error.errors["#NAME?"]
            raise

    def _replay(self, args: tuple) -> object:
        v = dict(self.defaults)
        v.update(zip(self.keys, args))
        x: object = None
        for step in self.plan:  # type: ignore[union-attr]
            if step[0]:  # function node: call it, then its own filters
                _, fn, ins, out, filters = step
                x = fn(*[v[i] for i in ins])
                for f in filters:
                    x = f(x)
                v[out] = x
            else:  # data node: an input, a default, or a function's result, through its filters
                _, nid, filters = step
                x = v[nid]
                for f in filters:
                    x = f(x)
                v[nid] = x
            if x is sh.NONE:
                return sh.NONE
        return v[self.out]


_FUNC_OK = {"type", "inputs", "outputs", "function", "wait_inputs", "index", "extra_inputs",
            "solve_cycle", "filters", "description"}
_DATA_OK = {"type", "wait_inputs", "index", "filters", "description"}


def _index_by_value(fn):
    """formulas' INDEX, given the range's values instead of the range when that cannot matter.

    With a reference, formulas' INDEX wraps every cell of the range in its own
    Ranges to return a reference (about 1 ms per call over 100 rows). When the
    INDEX is the whole formula, its result is immediately turned into a value,
    and for a single-row/column range (or with a column number) and scalar
    arguments both ways select the same cell; a blank becomes 0 either way.
    """
    import numpy as np
    from formulas.ranges import Ranges

    def scalar(a: object) -> bool:
        return np.size(a.value if isinstance(a, Ranges) else a) == 1

    def index(compiling, array, *args):
        if (isinstance(array, Ranges) and len(array.ranges) == 1 and len(args) in (1, 2)
                and all(map(scalar, args)) and (1 in array.value.shape or len(args) == 2)):
            array = array.value
        return fn(compiling, array, *args)

    return index


def _plan(pipe) -> list[tuple] | None:
    """The pipe's evaluation order as plain steps, or None if it uses other schedula features."""
    from formulas.builder import _default_filter
    from formulas.functions import get_functions

    nodes, pred = pipe.dsp.nodes, pipe.dsp.dmap.pred
    index_fn, to_value = get_functions()["INDEX"]["function"], tuple(_default_filter())
    plan: list[tuple] = []
    for task, _next, next_dsp in pipe.pipe:
        nid = task[2][0]
        node = nodes[nid]
        if next_dsp:
            return None
        if node["type"] == "function":
            if set(node) - _FUNC_OK or len(node["outputs"]) != 1:
                return None
            fn, out = node["function"], node["outputs"][0]
            if fn is index_fn and out == pipe.outputs[0] and nodes[out].get("filters") == to_value:
                fn = _index_by_value(fn)  # the formula is =INDEX(...): only its value is used
            plan.append((1, fn, tuple(node["inputs"]), out, tuple(node.get("filters", ()))))
        elif node["type"] == "data":
            if set(node) - _DATA_OK or len(pred.get(nid, ())) > 1:
                return None
            plan.append((0, nid, tuple(node.get("filters", ()))))
        else:
            return None
    return plan


def compile_formula(text: str, *, cell: object = None, raw_output: bool = False,
                    flat: bool = True) -> Compiled:
    """Parse and compile ``text`` ("=..."); raises formulas' FormulaError on bad syntax.

    ``cell`` (a ``formulas`` Ranges) is the formula's own position, for ROW()/COLUMN()
    without arguments. ``raw_output`` keeps a Ranges result as a reference instead
    of its value (what ExcelModel does for defined names).
    """
    from formulas import Parser
    from formulas.cell import CELL
    from formulas.functions import DSP

    builder = Parser(True).ast(text)[1]
    needs_cell = CELL in builder.dsp.nodes
    pipe = builder.compile(**({CELL: cell} if cell is not None else {}))
    if DSP in pipe.dsp.nodes:  # ISFORMULA and the like need the whole model
        raise Unsupported(f"{text}: needs the ExcelModel dispatcher")
    out = pipe.outputs[0]
    if raw_output:
        pipe.dsp.nodes[out].pop("filters", None)
    defaults = {k: d["value"] for k, d in pipe.dsp.default_values.items()}
    plan = _plan(pipe) if flat else None
    return Compiled(pipe, list(pipe.inputs), plan, defaults, out, needs_cell)


@dataclass
class Template:
    """A compiled formula plus, for each input, where to find it in a copy of the formula.

    ``specs[i]`` is a tuple of occurrence indices (all naming that input), or a
    string: a defined name, or a reference that is the same in every copy.
    """

    fn: Compiled
    specs: list[tuple[int, ...] | str]


def _canonical(text: str) -> str | None:
    """formulas' node name for a reference as written (``Plan!$F$8`` -> ``PLAN!F8``)."""
    from formulas.ranges import Ranges

    try:
        return Ranges.get_range(text)["name"]
    except Exception:
        return None


def is_reference(key: str) -> bool:
    """True if an input key is a cell/range reference rather than a name."""
    from formulas.errors import AnchorRangeName, InvalidRangeName
    from formulas.ranges import Ranges

    try:
        Ranges.get_range(key)
    except AnchorRangeName:
        raise Unsupported(f"spilled-range reference {key}") from None
    except InvalidRangeName:
        return False
    return True


def make_template(fn: Compiled, occs: list[Occurrence], *, shared: bool) -> Template | None:
    """Map ``fn``'s inputs onto ``occs``. With ``shared``, None if the mapping is not
    certain to hold for every copy (then each copy is compiled on its own)."""
    by_name: dict[str, list[int]] = {}
    for i, occ in enumerate(occs):
        name = _canonical(occ.text)
        if name is None:
            if shared:
                return None
            continue
        by_name.setdefault(name, []).append(i)
    specs: list[tuple[int, ...] | str] = []
    for key in fn.keys:
        if key in by_name:
            specs.append(tuple(by_name.pop(key)))
        elif shared and is_reference(key):
            return None  # a reference the scan did not see: it may shift between copies
        else:
            specs.append(key)
    if shared and (by_name or fn.needs_cell):
        return None
    return Template(fn, specs)
