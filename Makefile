# neardup's front door. `make demo` runs the main job, `make test` the whole test suite.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
STAMP := .make/installed

.PHONY: install demo test lint typecheck bench es-start es-stop clean

$(STAMP): pyproject.toml
	$(PIP) install --quiet --disable-pip-version-check -e '.[dev,bench]'
	@mkdir -p .make && touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PYTHON) -m neardup demo

test: $(STAMP)
	$(PYTHON) -m pytest

lint: $(STAMP)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

typecheck: $(STAMP)
	$(PYTHON) -m mypy

bench: $(STAMP)
	$(PYTHON) -m bench.run_all

es-start: $(STAMP)
	$(PYTHON) -m neardup es start

es-stop:
	$(PYTHON) -m neardup es stop

clean:
	rm -rf .make build *.egg-info .pytest_cache .mypy_cache .ruff_cache
