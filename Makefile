# The two README commands: `make demo` and `make test`. Both create the venv and install on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv toolchain test demo bench lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(STAMP)

venv: $(STAMP)

# Finds or builds kube-apiserver, etcd, pulumi and the Python language host (cached outside git).
toolchain: $(STAMP)
	$(PY) tests/toolchain/build.py

test: toolchain
	$(PY) -m pytest

demo: $(STAMP)
	$(VENV)/bin/cilium-ipam simulate

bench: $(STAMP)
	$(PY) -m bench

# mypy --strict on the packages listed in tests/test_code_standards.py (MYPY_STRICT_CLEAN).
lint: $(STAMP)
	$(VENV)/bin/ruff check provider reconciler policies stacks tests bench
	$(PY) -m pytest -q -p no:cacheprovider tests/test_code_standards.py -k mypy

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
