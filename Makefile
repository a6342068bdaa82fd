# badge-collector: `make run` and `make test` are all a newcomer needs.
VENV   := .venv
PY     := $(VENV)/bin/python
# Two stamps: what running needs (`make run`, `make demo`), and on top of it
# the test, lint and type-check tools (`make test` and the checks).
RUN_STAMP := $(VENV)/.installed-run
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
# Test workers (pytest-xdist): most of the suite's time is waiting on servers,
# subprocesses and settle windows, which workers overlap; tests sharing a module's
# or package's server stay on one worker (tests/xdist_scopes.py). 0: in-process.
# 4 on 2 cores: beside another CPU-bound process the suite then holds more of the
# machine (issue 43: beside one, 976 s on 4 against 1,156 s on 3 an hour before,
# with some CPU cuts landing in between); `make flake` runs 4 beside 2 hogs.
TEST_WORKERS ?= 4
# The suite's scratch files (SQLite files, the throwaway PostgreSQL cluster) go to
# tmpfs where it has room: on a busy disk fsync and WAL writes were waits, and a
# killed process loses nothing there either (OS crash safety is not under test).
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -gt 4000000 ] && echo /dev/shm || echo /tmp)
FLAKE_RUNS ?= 20
# The suite starts hundreds of Python processes (servers, their decoder
# processes, CLI commands, agents). With PYTHONDONTWRITEBYTECODE set (as some
# sandboxes and CI images do) each one compiles this project's modules again:
# about 0.3 s of CPU a start (`keys create`: 1.23 s against 0.95 s with the
# cache). The suite writes and reuses the cache; __pycache__ is ignored by git.
BYTECODE := PYTHONDONTWRITEBYTECODE=
# Compiled once before the workers start, so that they do not all compile at once.
PRECOMPILE := $(BYTECODE) $(PY) -m compileall -q collector api scoring proto bench tests scripts > /dev/null

.DEFAULT_GOAL := help
.PHONY: help run test postgres chromium check lint typecheck imports openapi demo bench fuzz flake clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(RUN_STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(RUN_STAMP) ## install what running needs and start the collector on the embedded SQLite default
	$(VENV)/bin/badge-collector serve

test: $(STAMP) postgres chromium check ## install the test tools (and PostgreSQL, Chromium) and run everything CI runs

postgres: ## install Debian's PostgreSQL server if missing (the suite starts its own)
	./scripts/ensure-postgres

chromium: ## install Debian's chromium and chromium-driver if missing (dashboard tests)
	./scripts/ensure-chromium

check: lint typecheck imports openapi ## ruff, mypy --strict, import contracts, openapi, pytest+coverage
	$(PRECOMPILE)
	$(BYTECODE) TMPDIR=$(TEST_TMPDIR) $(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadscope \
		--durations=20 --cpu-use=20 --cov --cov-report=term-missing:skip-covered --cov-fail-under=85 $(PYTEST_ARGS)
	$(VENV)/bin/coverage report --include='scoring/*,proto/*' --fail-under=100

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

imports: $(STAMP)
	$(VENV)/bin/lint-imports

openapi: $(STAMP)
	$(PY) -m collector.openapi --check openapi.json

demo: $(RUN_STAMP) ## screen the demo agent twice against `make run`'s collector (~20-30 s)
	$(PY) scripts/demo.py

bench: $(STAMP) postgres ## print ingest, assembly and read-latency figures (not a test)
	$(PY) bench/ingest.py
	$(PY) bench/ingest.py --senders 16 --retry --naive
	$(PY) bench/ingest.py --store postgresql --processes 1
	$(PY) bench/ingest.py --store postgresql --processes 2
	$(PY) bench/assembly.py
	$(PY) bench/reads.py
	$(PY) bench/read_flood.py --unbounded
	$(PY) bench/certificates.py
	$(PY) bench/coverage.py
	$(PY) bench/coverage.py --store postgresql
	$(PY) bench/reclassify.py

fuzz: $(STAMP) ## a million mutated exports through each OTLP door (~1 h; CI runs a slice)
	$(PY) bench/fuzz.py --inputs 1000000

flake: $(STAMP) postgres chromium ## the `timing` tests FLAKE_RUNS times beside a CPU hog per core; failures per test (not in make test)
	$(PRECOMPILE)
	$(BYTECODE) TMPDIR=$(TEST_TMPDIR) $(PY) scripts/flake_hunt.py --runs $(FLAKE_RUNS) -- $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .coverage
