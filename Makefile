# The two commands the README promises: `make run` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV) || { echo "python3 -m venv failed: on Debian run 'apt-get install python3-venv'"; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

run: $(BIN)/.installed
	$(BIN)/moderator play

test: $(BIN)/.installed
	$(BIN)/python -m pytest

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build *.egg-info
