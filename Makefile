# PayOps entry points. `make run` and `make test` are the two README commands.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Find a Python >= 3.12: $PYTHON, then python3.13/python3.12 on PATH, then pyenv's installs.
PYTHON_BOOT := $(shell scripts/find-python.sh)
VENV := .venv
PY := $(VENV)/bin/python
# `make test` runs the suite in this many pytest-xdist workers, a test module per worker at a time
# (its module fixtures, a browser or an emulator, start once); most of a live test's time is waiting
# on PostgreSQL, a subprocess or a browser, so two workers fit two cores. PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 2
# The installer of the locked dependencies (see $(STAMP)).
UV_PIN := uv==0.13.9
STAMP := $(VENV)/.installed-$(shell cat requirements/dev.lock pyproject.toml | sha1sum | cut -c1-12)

.PHONY: help install test-tools run test check bench emulator migrate seed fmt clean messages

help:  ## List the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): requirements/dev.lock pyproject.toml
	@test -n "$(PYTHON_BOOT)" || { echo "PayOps needs Python >= 3.12 (set PYTHON=/path/to/python3.12)"; exit 1; }
	@test -x $(PY) || $(PYTHON_BOOT) -m venv $(VENV)
	@# uv installs the lock with parallel downloads: about 5 s instead of pip's 2 minutes.
	$(PY) -m pip install --quiet $(UV_PIN)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements/dev.lock
	@rm -f $(VENV)/.installed-*; touch $@

# The browser tests' axe-core (package.json, package-lock.json): installed when missing or when the
# lock changed; npm ci installs exactly the versions the lock names. A test tool only: `make test`
# installs it, `make install` and `make run` never need Node, npm or the network for it.
node_modules/axe-core/package.json: package-lock.json
	@command -v npm >/dev/null || { echo "make test needs Node 20 and npm for axe-core (the browser tests' accessibility checks)"; exit 1; }
	npm ci --no-audit --no-fund
	@touch $@

install: $(STAMP)  ## Create .venv and install the locked Python dependencies (all `make run` needs)

test-tools: install node_modules/axe-core/package.json  ## The test suite's tools besides Python: npm's axe-core (needs Node 20 and npm)

migrate: install  ## Apply migrations (and the cache table) to the back office's and the emulator's databases
	@mkdir -p var
	$(PY) manage.py migrate --noinput
	$(PY) manage.py createcachetable
	@# The emulator is a guest with its own database, where the settings install it (not production).
	@if $(PY) manage.py shell -c "from django.conf import settings; raise SystemExit('emulator' not in settings.DATABASES)" 2>/dev/null; \
	then $(PY) manage.py migrate --database emulator --noinput; fi

run: migrate  ## Web on :8000, worker, emulator on :8001 (embedded default); Ctrl-C stops all
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py payops_bootstrap
	$(PY) manage.py sync_schedules
	$(PY) scripts/run_all.py

emulator: migrate  ## The upstream emulator alone on 127.0.0.1:8001
	$(PY) -m uvicorn emulator.asgi:application --host 127.0.0.1 --port 8001 --lifespan on

test: test-tools  ## The whole test suite (DATABASE_URL / REDIS_URL used when set)
	@mkdir -p var/staticfiles
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The languages besides English (config/settings/base.py LANGUAGES), as gettext names them.
LOCALES := -l es -l pt_BR

messages: install  ## Regenerate and compile every catalog (root templates, then each app's); needs gettext
	@command -v msgfmt >/dev/null || { echo "make messages needs GNU gettext (apt-get install gettext)"; exit 1; }
	@# The root templates only, into locale/; each app with a locale/ folder, into its own.
	cd templates && ../$(PY) ../manage.py makemessages $(LOCALES) --no-obsolete --add-location file
	@# config is no app but has its own catalog (settings.LOCALE_PATHS): the API's generic errors.
	@for dir in */locale; do test -d "$$dir" || continue; app=$${dir%/locale}; test -f "$$app/apps.py" -o "$$app" = config || continue; \
	  (cd $$app && ../$(PY) ../manage.py makemessages $(LOCALES) --no-obsolete --add-location file) || exit 1; done
	$(PY) manage.py compilemessages $(LOCALES) --ignore '.venv' --ignore 'var'

check: install  ## ruff, ruff format --check, mypy, manage.py check, makemigrations --check
	@mkdir -p var
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py check
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py makemigrations --check --dry-run

bench: migrate  ## Run the benchmarks in bench/ and print their figures
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

fmt: install  ## Format and autofix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:  ## Remove the venv and local data
	rm -rf $(VENV) var
