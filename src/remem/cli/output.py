"""CLI output: rich tables for people, JSON for scripts, one error shape for both.

Terminal safety: stored text (values, scopes, source texts, reasons) and echoed input can hold
control characters. Nothing this module prints passes one through raw:

- human output goes through :func:`escape_controls`: C0 controls, DEL, C1 controls
  (U+0080-U+009F), bidi controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), line
  and paragraph separators (U+2028-U+2029) and lone surrogates become visible escapes
  (``\\x1b``, ``\\r``, ``\\t``, ``\\u202e``, ``\\udc80``). Inside a field (a table cell, a value
  in a line) a newline is shown as ``\\n`` too, so a stored value cannot forge a line; a whole
  message keeps the newlines between its own lines. Backslashes are printed as they are
  (human output is for reading; ``--json`` is the exact form).
- ``--json`` output is lossless JSON: ``json.dumps`` escapes C0 controls, and
  :func:`json_text` also writes every other character above as a ``\\uXXXX`` escape, so the JSON
  stream itself is safe on a terminal and decodes to exactly the stored text. A consumer that
  decodes it (``jq -r``) gets the stored text back, control characters included, by design.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from remem.errors import RememError

# markup=False: stored text is shown exactly as stored ("[/bold]" or "[x] buy milk" are data,
# never Rich markup); emoji=False: ":thumbs_up:" is data too. Styles come from rich.text.Text.
console = Console(markup=False, highlight=False, emoji=False)
err_console = Console(stderr=True, markup=False, highlight=False, emoji=False)

# bidi and every other invisible format character (Unicode category Cf: soft hyphen, zero
# widths, BOM, word joiner, interlinear annotations, the Tag block used to smuggle text),
# line/paragraph separators and lone surrogates
_WIDE = ("\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
         "\ud800-\udfff\U000e0000-\U000e007f")
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_WIDE}]")
_UNSAFE_KEEP_NEWLINES = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_WIDE}]")
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f{_WIDE}]")  # json.dumps escapes C0 itself
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape_controls(text: Any, *, keep_newlines: bool = False) -> str:
    """``text`` (``str()`` of anything) with every control character as a visible escape.

    Args:
        text: what is about to be printed.
        keep_newlines: keep ``\\n`` as a line break (a whole message); False for a field.

    Returns:
        Text holding no C0/C1/DEL, bidi control, line separator or lone surrogate.
    """
    pattern = _UNSAFE_KEEP_NEWLINES if keep_newlines else _UNSAFE
    return pattern.sub(_visible, text if isinstance(text, str) else str(text))


def json_text(obj: Any, *, indent: int | None = 2) -> str:
    """Lossless JSON with every control, bidi and separator character ``\\u``-escaped."""
    text = json.dumps(to_jsonable(obj), ensure_ascii=False, indent=indent)
    return _UNSAFE_IN_JSON.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a JSON escape of an astral character is its UTF-16 surrogate pair
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


class State:
    """Global options shared by every command (set by the main callback)."""

    db: str | None = None
    providers_file: str | None = None
    memory: str | None = None
    json: bool = False


STATE = State()

ProvidersFile = Annotated[str | None, typer.Option(
    "--providers-file", help="Operator file registering model providers (as the global "
                             "--providers-file / REMEM_PROVIDERS_FILE).")]


def use_providers_file(path: str | None) -> None:
    """A command's own --providers-file overrides the global one."""
    if path:
        STATE.providers_file = path


def to_jsonable(obj: Any) -> Any:
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if isinstance(obj, list):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def emit(obj: Any, human: str | Table | None = None) -> None:
    """Prints ``obj`` as JSON with --json, else ``human``: a message (escaped here, its own
    newlines kept) or a table made by :func:`table` (cells escaped when added).

    Raises:
        TypeError: a table not made by :func:`table` (its cells were never escaped).
    """
    if STATE.json or human is None:
        sys.stdout.write(json_text(obj) + "\n")
    elif isinstance(human, str):
        console.print(escape_controls(human, keep_newlines=True))
    elif isinstance(human, SafeTable):
        console.print(human)
    else:
        raise TypeError("emit prints text or a table made by remem.cli.output.table")


def say(text: str, *, err: bool = False) -> None:
    """Prints one message (escaped, its own newlines kept) to stdout or stderr."""
    (err_console if err else console).print(escape_controls(text, keep_newlines=True))


def fail(exc: RememError, exit_code: int = 1) -> None:
    """Prints a RememError (message, no traceback; JSON object with --json) and exits."""
    if STATE.json:
        sys.stdout.write(json_text({"error": exc.to_dict()}, indent=None) + "\n")
    else:
        from rich.text import Text

        err_console.print(Text.assemble(
            ("error", "red"), escape_controls(f" ({exc.code}): {exc.message}",
                                              keep_newlines=True)))
    raise typer.Exit(exit_code)


def value_text(value: Any) -> str:
    """A stored value on one line: strings as they are, other types as JSON; escaped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return escape_controls(text)


class SafeTable(Table):
    """A rich table whose title and cells were escaped (made by :func:`table` only)."""


def table(title: str | None, columns: Sequence[str | tuple[str, dict[str, Any]]],
          rows: Iterable[Sequence[Any]]) -> SafeTable:
    """A table with every title, header and cell escaped as a field (newlines shown as ``\\n``).

    Args:
        title: the table's title, or None.
        columns: names (``overflow="fold"``), or ``(name, rich column options)``.
        rows: cell values (``str()`` of each, escaped).
    """
    t = SafeTable(title=None if title is None else escape_controls(title))
    for col in columns:
        name, opts = (col, {"overflow": "fold"}) if isinstance(col, str) else col
        t.add_column(escape_controls(name), **opts)
    for row in rows:
        t.add_row(*(escape_controls("" if c is None else c) for c in row))
    return t


def items_table(items: list[Any], title: str | None = None) -> SafeTable:
    cols: list[str | tuple[str, dict[str, Any]]] = [("item", {"no_wrap": True})]  # ids are
    cols += ["scope", "key", "value", "kind", "status", "rev", "valid_at"]  # copied: keep whole
    rows = []
    for v in items:
        d = v if isinstance(v, dict) else v.to_dict()
        rows.append((d["item_id"], d["scope"], d["key"], value_text(d["value"]), d["kind"],
                     d["status"], d["revision"], d["valid_at"][:19]))
    return table(title, cols, rows)
