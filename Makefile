# detailsim: `make demo` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP_DEPS := $(VENV)/.deps-installed
STAMP_BUILD := $(VENV)/.native-built
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock pyproject.toml .cargo/config.toml

.PHONY: all demo test test-rust test-python lint bench fuzz build clean crosscheck

all: build

$(STAMP_DEPS): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "polars>=1.0" "click>=8.1" "tqdm>=4.60" "numpy>=1.24" \
		"dask[distributed]>=2024.1" "matplotlib>=3.7" "jinja2>=3.1" "dpkt>=1.9" \
		"pytest>=8" "hypothesis>=6" "pandas>=2" "pyarrow>=14" "duckdb>=1.0" \
		"nbclient>=0.9" "nbformat>=5.9" "ipykernel>=6.25"
	touch $@

# Debian tools the tests drive: headless Chromium (renders the HTML report), tshark (decodes pcaps), and for
# live mode iproute2 (namespaces, veth) and ethtool (offloads off).
SYSDEPS_STAMP := $(VENV)/.sysdeps
$(SYSDEPS_STAMP): | $(STAMP_DEPS)
	@if ! command -v chromium >/dev/null || ! command -v tshark >/dev/null || ! command -v ethtool >/dev/null || ! command -v ip >/dev/null; then \
		echo "installing chromium, tshark, iproute2 and ethtool (Debian packages)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium tshark iproute2 ethtool >/dev/null; \
	fi
	touch $@

# The release build of the native module, installed into the venv in editable form.
$(STAMP_BUILD): $(STAMP_DEPS) $(RUST_SRC)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	touch $@

build: $(STAMP_BUILD)

demo: build
	$(VENV)/bin/detailsim demo

test: lint test-rust test-python

test-rust:
	cargo test --workspace -q

# rustfmt's format (rustfmt.toml) is checked and clippy's lints are errors (both ship with rustup's default profile; a toolchain without it says so)
lint:
	@if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; \
	else echo "lint: rustfmt is not installed (rustup component add rustfmt); format not checked"; fi
	@if cargo clippy --version >/dev/null 2>&1; then cargo clippy -q --release --workspace --all-targets -- -D warnings; \
	else echo "lint: cargo clippy is not installed (rustup component add clippy); not linted"; fi

# ns-3 (the `ns3` wheel, about 69 MB, 2-3 minutes) for one crosscheck case in the tests; if the registry
# cannot give it within ten minutes, the reason is kept and that one test is skipped saying it.
NS3_WHEEL := ns3==3.44.post0
NS3_STAMP := $(VENV)/.ns3
$(NS3_STAMP): | $(STAMP_DEPS)
	@rm -f $(VENV)/.ns3-unavailable
	@if ! timeout 600 $(PIP) install -q "$(NS3_WHEEL)" 2>$(VENV)/.ns3-pip.log; then \
		echo "pip install $(NS3_WHEEL) failed or took over 10 minutes: $$(tail -n 1 $(VENV)/.ns3-pip.log)" > $(VENV)/.ns3-unavailable; \
		cat $(VENV)/.ns3-unavailable; \
	fi
	touch $@

test-python: build $(SYSDEPS_STAMP) $(NS3_STAMP)
	DETAILSIM_NS3_EXPECTED=1 $(VENV)/bin/pytest -q tests

# valgrind (Debian) counts the instructions where `perf` cannot (a VM without hardware counters)
bench: build
	@command -v valgrind >/dev/null || { echo "installing valgrind (Debian package)"; export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends valgrind >/dev/null; }
	$(PY) benches/bench.py $(ARGS)

# ns-3 against detailsim, case by case (detailsim.repro.crosscheck): installs the ns3 wheel (about 69 MB, 2-3
# minutes) into the venv, runs every case on both and rewrites docs/validation.md's generated table.
crosscheck: build
	$(VENV)/bin/pip install -q "$(NS3_WHEEL)"
	$(VENV)/bin/detailsim crosscheck --update-docs

# A long input-fuzzing campaign (detailsim.fuzz): FUZZ_CASES mutated scenarios, sweep files, CSV flow lists
# and CDF files over every core; the report (every failure with its input) goes to fuzz-report.json.
FUZZ_CASES ?= 100000
fuzz: build
	$(PY) -m detailsim.fuzz --cases $(FUZZ_CASES) --out fuzz-report.json
	PROPTEST_CASES=20000 cargo test --release -q -p detailsim-model --test schema_props
	for i in 1 2 3 4 5; do HYPOTHESIS_PROFILE=explore $(VENV)/bin/pytest -q -p no:cacheprovider tests/test_invariants.py tests/test_bad_input.py || exit 1; done

clean:
	rm -rf target $(VENV)
