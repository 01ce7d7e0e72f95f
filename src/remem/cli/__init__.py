"""Command-line interface (Typer): thin commands over the Memory API."""
