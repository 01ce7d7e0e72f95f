"""CLI output: rich tables for people, JSON for scripts, one error shape for both."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from remem.errors import RememError

# markup=False: stored text is shown exactly as stored ("[/bold]" or "[x] buy milk" are data,
# never Rich markup); styles are applied with rich.text.Text where wanted.
console = Console(markup=False, highlight=False)
err_console = Console(stderr=True, markup=False, highlight=False)


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


def emit(obj: Any, human: Any = None) -> None:
    """Prints ``obj`` as JSON with --json, else ``human`` (a rich renderable or str)."""
    if STATE.json or human is None:
        sys.stdout.write(json.dumps(to_jsonable(obj), ensure_ascii=False, indent=2) + "\n")
    else:
        console.print(human)


def fail(exc: RememError, exit_code: int = 1) -> None:
    """Prints a RememError (message, no traceback; JSON object with --json) and exits."""
    if STATE.json:
        sys.stdout.write(json.dumps({"error": exc.to_dict()}, ensure_ascii=False) + "\n")
    else:
        from rich.text import Text

        err_console.print(Text.assemble(("error", "red"), f" ({exc.code}): {exc.message}"))
    raise typer.Exit(exit_code)


def value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def items_table(items: list[Any], title: str | None = None) -> Table:
    t = Table(title=title, show_lines=False)
    t.add_column("item", no_wrap=True)  # ids are copied into other commands: keep whole
    for col in ("scope", "key", "value", "kind", "status", "rev", "valid_at"):
        t.add_column(col, overflow="fold")
    for v in items:
        d = v if isinstance(v, dict) else v.to_dict()
        t.add_row(d["item_id"], d["scope"], d["key"], value_text(d["value"]), d["kind"],
                  d["status"], str(d["revision"]), d["valid_at"][:19])
    return t
