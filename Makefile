# Two commands do all the set-up on a fresh machine:
#   make run    creates/reuses .venv, installs requirements.txt, starts the app
#   make test   creates/reuses .venv, installs requirements-dev.txt, runs every test
#   make serve  for a class: one app process per core (REPLICAS=n) behind HAProxy on PORT,
#               with a shared redis-server (deploy/serve.py; installs both from Debian if root)
#   make catalogs  extract, update and compile the translation catalogs (stockdemo/locale/)
#   make image  the app's container image (deploy/image.py): podman, or docker where podman is
#               missing; BASE=IMAGE picks the base (default: python:3.11-slim, or one built from
#               Debian's packages where no registry can be reached)
# make test checks Debian's packages the tests need (deploy/system.py: chromium, haproxy,
# redis-server, podman, runc, debootstrap, libseccomp2), installs them with apt-get when
# run as root, and otherwise stops with the one command to run. It also needs npm.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: run serve image test system-test lint bench clean catalogs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt $(VENV)/.installed
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

# app.py as one replica serves it (deploy/replica_app.py), cold: the Playground's moves go on
# the stage's own socket, not script runs (a key step 54 -> 26-29 ms, docs/hosting.md).
run: $(VENV)/.installed
	STOCKDEMO_WARM_STAGE=0 $(BIN)/streamlit run deploy/replica_app.py --server.port $(PORT)

serve: $(VENV)/.installed
	$(BIN)/python deploy/serve.py --port $(PORT) $(if $(REPLICAS),--replicas $(REPLICAS))

image:
	$(PYTHON) deploy/image.py $(if $(BASE),--base $(BASE))

# axe-core for the accessibility browser test, from the npm registry (package-lock.json).
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

system-test:
	$(PYTHON) deploy/system.py test

test: system-test $(VENV)/.installed-dev node_modules/.package-lock.json
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q --durations=25  # the slowest, to keep the whole run under 30 minutes

# The words in each language (stockdemo/locale/): templates extracted from the code, each
# language's catalogs updated to them, then compiled (docs/translating.md).
catalogs: $(VENV)/.installed
	$(BIN)/python -m stockdemo.i18n.catalogs

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/bench_core.py
	$(BIN)/python bench/bench_browser.py

clean:
	rm -rf $(VENV) artifacts
