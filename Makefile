# detailsim: `make demo` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP_DEPS := $(VENV)/.deps-installed
STAMP_BUILD := $(VENV)/.native-built
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock pyproject.toml

.PHONY: all demo test test-rust test-python bench build clean

all: build

$(STAMP_DEPS): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "polars>=1.0" "click>=8.1" "tqdm>=4.60" "numpy>=1.24" "pytest>=8" "hypothesis>=6"
	touch $@

# The release build of the native module, installed into the venv in editable form.
$(STAMP_BUILD): $(STAMP_DEPS) $(RUST_SRC)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	touch $@

build: $(STAMP_BUILD)

demo: build
	$(VENV)/bin/detailsim demo

test: test-rust test-python

test-rust:
	cargo test --workspace --exclude detailsim-py -q

test-python: build
	$(VENV)/bin/pytest -q tests

bench: build
	$(PY) benches/bench.py

clean:
	rm -rf target $(VENV)
