# The two commands the README promises: `make run` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
AXE_VERSION := 4.14.1
AXE := .axe/node_modules/axe-core/axe.min.js

.PHONY: run test bench clean browser fribidi

# `make run` installs what playing needs; `make test` adds the test tools. PYTHONWARNINGS quiets setuptools'
# notice about editable installs, which tells a player nothing.
PIP := PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet

$(BIN)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV) || { echo "python3 -m venv failed: on Debian run 'apt-get install python3-venv'"; exit 1; }
	$(PIP) --upgrade pip
	$(PIP) -e .
	touch $@

$(BIN)/.installed: $(BIN)/.runtime
	$(PIP) -e '.[test]'
	touch $@

run: $(BIN)/.runtime
	$(BIN)/moderator play

test: $(BIN)/.installed browser fribidi $(AXE)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The browser tests drive Debian's Chromium through Debian's chromedriver (nothing downloads a browser).
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get install -y -q chromium chromium-driver >/dev/null \
		|| { $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q chromium chromium-driver >/dev/null; }; \
	fi

# The board lays Persian and Arabic out with Raqm, which Pillow's wheels carry with HarfBuzz; it loads the system's
# FriBiDi, installed from Debian when Pillow finds no Raqm.
fribidi: $(BIN)/.runtime
	@if ! $(BIN)/python -c "import sys; from PIL import features; sys.exit(not features.check('raqm'))"; then \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get install -y -q libfribidi0 >/dev/null \
		|| { $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q libfribidi0 >/dev/null; }; \
	fi

# The accessibility checker the browser tests run in each page: axe-core, pinned, from the npm registry into a
# folder git ignores (nothing of it is committed). npm comes from Debian when it is missing.
$(AXE):
	@command -v npm >/dev/null || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get install -y -q npm >/dev/null \
		|| { $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q npm >/dev/null; }; }
	npm install --prefix .axe --save-exact --no-audit --no-fund --ignore-scripts --loglevel=error axe-core@$(AXE_VERSION)
	@test -f $@

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build *.egg-info .axe
