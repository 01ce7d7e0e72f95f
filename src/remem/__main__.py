"""``python -m remem``: the ``remem`` command line (same as the console script)."""

from remem.cli.main import main

main()
