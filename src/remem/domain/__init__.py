"""Pure domain: data plus functions. No I/O, no clock, no randomness (STYLE.md habit 1)."""
