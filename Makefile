# neardup's front door. `make demo` runs the main job, `make test` the whole test suite.
# Everything runs in the project's own virtual environment (.venv), created here on first use, so a
# clean clone needs only a Python 3.11 with its venv module: nothing is installed outside .venv, and
# a system Python that refuses `pip install` (PEP 668) is never asked to.
BASE_PYTHON ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.neardup-installed

.PHONY: install demo test lint typecheck bench es-start es-stop clean

# made whole or not at all: a venv left half-made (no ensurepip, a Python too old) would be reused by every later run
$(PYTHON):
	@$(BASE_PYTHON) -c 'import re, sys; need = tuple(map(int, re.search(r"requires-python = \">=(\d+)\.(\d+)", open("pyproject.toml").read()).groups())); sys.exit(0 if sys.version_info >= need else "neardup needs Python %d.%d or newer (pyproject.toml), and $(BASE_PYTHON) is %s: name another with BASE_PYTHON (BASE_PYTHON=python3.11 make test)" % (*need, sys.version.split()[0]))'
	rm -rf $(VENV)
	$(BASE_PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "creating $(VENV) failed: on Debian or Ubuntu install python3-venv"; exit 1; }

$(STAMP): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PYTHON) -m neardup demo

test: $(STAMP)
	$(PYTHON) -m pytest

lint: $(STAMP)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

typecheck: $(STAMP)
	$(PYTHON) tools/typecheck.py

bench: $(STAMP)
	$(PYTHON) -m bench.run_all

es-start: $(STAMP)
	$(PYTHON) -m neardup es start

es-stop:
	$(PYTHON) -m neardup es stop

clean:
	rm -rf $(VENV) .make build *.egg-info .pytest_cache .mypy_cache .ruff_cache
