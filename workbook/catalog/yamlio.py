"""YAML loading with line numbers, and pydantic errors turned into InputError (file, line, field).

PyYAML (YAML 1.1) reads ``3e12`` as a string; our loader resolves it as a float, as users expect.
"""

from __future__ import annotations

import math
import re
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from workbook.errors import InputError
from workbook.safe_write import read_bounded

Loc = tuple[Any, ...]

#: YAML 1.2-style floats: 3e12, 1.5E-3, .5, 2., plus the 1.1 forms PyYAML already knows
_FLOAT_RE = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _Loader(yaml.SafeLoader):
    """SafeLoader whose float resolver also accepts exponent forms without a dot (``3e12``)."""


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same loader on libyaml's parser where PyYAML has it (the same nodes and marks, several times
    faster). Its error messages are terser, so a file it rejects is parsed again by :class:`_Loader`."""


#: YAML 1.2 core schema: only true/false are booleans (``yes``, ``on`` are text), integers are decimal, 0o octal
#: or 0x hex (YAML 1.1's ``0400`` = 256, ``1:30`` = 90 and ``1_000`` are not numbers)
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
#: a leading zero: YAML 1.1 reads it as octal, YAML 1.2 as decimal; refused rather than guessed
_LEADING_ZERO = re.compile(r"^[-+]?0[0-9_]+$")
_OVERRIDDEN = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool")


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if _LEADING_ZERO.match(text):
        raise yaml.constructor.ConstructorError(
            None, None, f"ambiguous number {text!r} (a leading zero: YAML 1.1 reads it as octal); write it without "
            "the leading zero, as 0o... for octal, or quote it as text", node.start_mark)
    return int(text, 0) if text[:2] in ("0o", "0x") else int(text)


def _construct_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode):
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError) as exc:
        raise yaml.constructor.ConstructorError(None, None, f"invalid date {node.value!r} ({exc})",
                                                node.start_mark) from None


for _cls in (_Loader, _FastLoader):
    _cls.yaml_implicit_resolvers = {
        ch: [(tag, rx) for tag, rx in resolvers if tag not in _OVERRIDDEN]
        for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _cls.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_RE, list("tTfF"))
    _cls.add_implicit_resolver("tag:yaml.org,2002:int", _INT_RE, list("-+0123456789"))
    _cls.add_implicit_resolver("tag:yaml.org,2002:int", _LEADING_ZERO, list("-+0"))  # refused when constructed
    _cls.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_RE, list("-+0123456789."))
    _cls.add_constructor("tag:yaml.org,2002:int", _construct_int)
    _cls.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


#: catalogue, scenario and request files are small; anything larger is refused before it is parsed (and no more
#: than this is ever read)
MAX_YAML_BYTES = 4 * 1024 * 1024
#: nodes of a document counted with every alias expanded (the largest shipped file has about 1,300)
MAX_YAML_NODES = 200_000
#: nesting of mappings and sequences (the shipped files nest at most 5 deep)
MAX_YAML_DEPTH = 64
#: characters a YAML file must not hold: C0 controls other than tab, LF and CR; DEL; C1 controls; U+FFFE, U+FFFF
#: (XML 1.0 cannot hold most of them, so a workbook could not either)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff\ud800-\udfff]")


def check_text(text: str, name: str | None, field: str | None = None) -> None:
    """InputError (line, code point) if *text* holds a control character (see _CONTROL)."""
    m = _CONTROL.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1 if name else None
        raise InputError(f"control character U+{ord(m.group()):04X} at character {m.start() + 1}", file=name,
                         line=line, field=field, expected="printable text (tab and line breaks allowed)")


def load_yaml(path: str | Path) -> tuple[Any, dict[Loc, int]]:
    """Parse a YAML file: (data, {path tuple: 1-based line}). Raises InputError on bad YAML.

    The line map holds every mapping key (path ending in the key) and sequence item (path ending
    in the index); the root is ``()`` -> 1. Duplicate keys in one mapping are an error.
    """
    return parse_yaml(read_text(path), str(path))


def read_text(path: str | Path) -> str:
    """The text of a YAML file: at most MAX_YAML_BYTES, UTF-8 (InputError naming the line of a bad byte)."""
    path = Path(path)
    raw = read_bounded(path, MAX_YAML_BYTES, "a YAML file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}", file=str(path),
                         line=line, expected="a UTF-8 encoded YAML file") from None


def load_mapping(path: str | Path, what: str, fields: str) -> tuple[dict, dict[Loc, int]]:
    """``load_yaml`` of a file that must be one mapping: "<what> must be a mapping of fields (<fields>)"."""
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a mapping of fields ({fields})", file=str(path), line=1)
    return data, lines


def parse_yaml(text: str, name: str) -> tuple[Any, dict[Loc, int]]:
    """``load_yaml`` on text already read (*name* is the file errors name)."""
    try:
        return _parse(text, name, _FastLoader)
    except InputError:
        if _FastLoader is _Loader:
            raise
        return _parse(text, name, _Loader)  # the pure-Python parser names the problem better


def _check_depth(text: str, name: str, loader_class: type) -> None:
    """Refuse nesting deeper than MAX_YAML_DEPTH from the event stream, before the (recursive) composer runs."""
    depth = 0
    loader = loader_class(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise InputError(f"nested more than {MAX_YAML_DEPTH} levels deep", file=name,
                                     line=event.start_mark.line + 1,
                                     expected=f"at most {MAX_YAML_DEPTH} levels of mappings and lists")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    finally:
        loader.dispose()


def _check_size(root: yaml.Node, name: str) -> None:
    """Refuse a document of more than MAX_YAML_NODES nodes with every alias expanded (nested aliases, the
    "billion laughs", grow exponentially), or one that refers to itself; linear in the composed nodes."""
    size: dict[int, int] = {}
    on_path: set[int] = set()

    def count(node: yaml.Node) -> int:
        key = id(node)
        if key in size:
            return size[key]
        if key in on_path:
            raise InputError("an alias refers to a node that contains it (a recursive structure)", file=name,
                             line=node.start_mark.line + 1, expected="aliases of complete nodes")
        on_path.add(key)
        n = 1
        if isinstance(node, yaml.MappingNode):
            n += sum(count(k) + count(v) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            n += sum(count(v) for v in node.value)
        on_path.discard(key)
        size[key] = n = min(n, MAX_YAML_NODES + 1)
        if n > MAX_YAML_NODES:
            raise InputError(f"more than {MAX_YAML_NODES:,} values once aliases are expanded", file=name,
                             line=node.start_mark.line + 1, expected=f"at most {MAX_YAML_NODES:,} values")
        return n

    count(root)


def _parse(text: str, name: str, loader_class: type) -> tuple[Any, dict[Loc, int]]:
    check_text(text, name)
    try:
        _check_depth(text, name, loader_class)
    except yaml.YAMLError:
        pass  # malformed: the composer below says where
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {(): 1}
        _check_size(node, name)
        lines: dict[Loc, int] = {(): node.start_mark.line + 1}
        _walk(node, (), lines, name)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        msg = " ".join(s for s in (exc.context, exc.problem) if s) or "malformed YAML"
        raise InputError(f"malformed YAML: {msg}", file=name, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", file=name) from None
    finally:
        loader.dispose()
    return data, lines


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int], file: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            if isinstance(key_node, yaml.ScalarNode):
                _walk(key_node, loc, lines, file)  # a key is text too
            if key in seen:
                raise InputError(
                    f"duplicate key {key!r} (first given on line {seen[key]})",
                    file=file, line=line, field=_dotted(loc + (key,)),
                )
            seen[key] = line
            lines[loc + (key,)] = line
            _walk(value_node, loc + (key,), lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[loc + (i,)] = item.start_mark.line + 1
            _walk(item, loc + (i,), lines, file)
    elif isinstance(node, yaml.ScalarNode):  # an escape in a quoted scalar ("\x0b", "\0") decodes to a control
        m = _CONTROL.search(node.value)       # character the raw text did not hold: refused like a raw one
        if m is not None:
            raise InputError(f"control character U+{ord(m.group()):04X} (written as an escape)", file=file,
                             line=node.start_mark.line + 1, field=_dotted(loc) or None,
                             expected="printable text (tab and line breaks allowed)")


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    """Line of the longest prefix of ``loc`` found in the line map."""
    loc = tuple(loc)
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


# --------------------------------------------------------------------------- pydantic -> InputError
def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated/list to the inner model type (or the type itself)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else tp
    return tp


def _fmt(v: float) -> str:
    """A bound as users write it: 1000000 rather than 1e+06, 1e+16 for huge ones."""
    if float(v).is_integer() and abs(v) < 1e10:
        return str(int(v))
    return f"{v:g}"


def field_range(model: Any, loc: Loc) -> str | None:
    """The allowed range of the field at ``loc`` from its Field(ge/gt/le/lt), e.g. '0 < x <= 1'."""
    tp: Any = model
    info = None
    for part in loc:
        tp = _unwrap(tp)
        if typing.get_origin(tp) in (list, tuple) and isinstance(part, int):
            tp = typing.get_args(tp)[0]
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel) and part in tp.model_fields:
            info = tp.model_fields[part]
            tp = info.annotation
            continue
        return None
    if info is None:
        return None
    lo = hi = None
    for meta in info.metadata:
        for attr, sym in (("ge", "<="), ("gt", "<")):
            if getattr(meta, attr, None) is not None:
                lo = f"{_fmt(getattr(meta, attr))} {sym} "
        for attr, sym in (("le", "<="), ("lt", "<")):
            if getattr(meta, attr, None) is not None:
                hi = f" {sym} {_fmt(getattr(meta, attr))}"
    if lo is None and hi is None:
        return None
    return f"{lo or ''}x{hi or ''}"


def _expected(err: dict, model: Any, loc: Loc) -> str | None:
    ctx = err.get("ctx") or {}
    rng = field_range(model, loc)
    if err["type"] in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return rng or ", ".join(f"{k} {v}" for k, v in ctx.items())
    if err["type"] == "finite_number":
        return f"a finite number{', ' + rng if rng else ''}"
    if "expected" in ctx:
        return str(ctx["expected"])
    if err["type"] == "extra_forbidden":
        return _allowed_fields(model, loc[:-1])
    if err["type"] == "string_pattern_mismatch":
        return f"pattern {ctx.get('pattern')}"
    return rng


def _allowed_fields(model: Any, loc: Loc) -> str | None:
    tp: Any = model
    for part in loc:
        tp = _unwrap(tp)
        if typing.get_origin(tp) in (list, tuple) and isinstance(part, int):
            tp = typing.get_args(tp)[0]
        elif isinstance(tp, type) and issubclass(tp, BaseModel) and part in tp.model_fields:
            tp = tp.model_fields[part].annotation
        else:
            return None
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "one of " + ", ".join(tp.model_fields)
    return None


def _clean_loc(loc: Loc) -> Loc:
    """Drop pydantic's internal loc parts (function-after[...], union tags)."""
    return tuple(p for p in loc if isinstance(p, int) or not ("[" in str(p) or "(" in str(p)))


def to_input_error(
    exc: ValidationError, *, file: str | None, lines: dict[Loc, int], model: Any, prefix: Loc = ()
) -> InputError:
    """The first error of a pydantic ValidationError as an InputError with file, line, field."""
    err = exc.errors(include_url=False)[0]
    loc = prefix + _clean_loc(tuple(err["loc"]))
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "finite_number":
        msg = "must be a finite number (NaN and infinity are not allowed)"
    elif err["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
    val = err.get("input")
    if err["type"] not in ("missing", "extra_forbidden", "value_error") and not isinstance(val, (dict, list)):
        msg += f", got {val!r}"
    more = exc.error_count() - 1
    if more:
        msg += f" (and {more} more error{'s' if more > 1 else ''})"
    return InputError(
        msg,
        file=file,
        line=line_of(lines, loc),
        field=_dotted(loc) or None,
        expected=_expected(err, model, _clean_loc(tuple(err["loc"]))),
    )


def is_bad_float(v: Any) -> bool:
    """True for NaN/inf floats (for places pydantic does not check)."""
    return isinstance(v, float) and not math.isfinite(v)
