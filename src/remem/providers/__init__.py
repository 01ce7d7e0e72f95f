"""Adapters that talk to models and tokenizers; pick them through :mod:`remem.providers.registry`.

- ``local``: bundled all-MiniLM-L6-v2 int8 ONNX embedder (offline default).
- ``openai_compat``: any OpenAI-compatible embeddings endpoint.
- ``tokenizers``: offline tiktoken encodings for token budgets.
"""
