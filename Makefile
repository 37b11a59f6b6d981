# Two commands do all set-up on a fresh machine: `make test` and `make train`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-e2e test-all test-slow test-rllib test-lowest lint bench train train-az clean

# The install step also compiles every numba kernel family once (trinity prepare, about 40 s on 2 cores),
# so that after any target's set-up the first solve, MCTS move or review loads a warm cache.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,train]"
	$(BIN)/trinity prepare --workers 2
	touch $(STAMP)

# pytest's workers: one per core (pytest-xdist); the engine is compiled once before they start
PYTEST := $(BIN)/python -m pytest -n auto --durations=15

## test: set up .venv, compile the engine once and run the default suite on every core
test: $(STAMP)
	$(BIN)/trinity prepare --workers 2
	$(PYTEST) -m "not slow and not e2e and not browser"

## test-e2e: the heaviest end-to-end cases alone (wheel build, killed and resumed trainers, whole notebooks, the examples and trainers run through their commands, the differential checks at full count); CI runs them after make test
test-e2e: $(STAMP)
	$(BIN)/trinity prepare --workers 2
	$(PYTEST) -m "e2e and not slow and not browser"

## test-all: make test, then make test-e2e
test-all: test test-e2e

# What a second `make train` does with the run already in runs/quick: start afresh (the
# default), or `make train RUN_ARGS=--resume` to continue it.
RUN_ARGS ?= --overwrite

## train: a short self-play run (configs/train/quick.yaml), evaluated, with a report in runs/quick
train: $(STAMP)
	$(BIN)/trinity train quick --run runs/quick $(RUN_ARGS)

## train-az: a short AlphaZero run (configs/train/az-quick.yaml), evaluated, with a report in runs/az-quick
train-az: $(STAMP)
	$(BIN)/trinity train az-quick --run runs/az-quick $(RUN_ARGS)

## test-slow: the long runs (full fuzz and differential counts)
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow

## test-rllib: install the rllib extra (Ray) and run the RLlib tests, the slow one included, the solved openings and AlphaZero on a local Ray cluster
test-rllib: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[rllib]"
	$(BIN)/python -m pytest --durations=10 tests/test_rllib.py tests/test_openings*.py tests/test_alphazero_ray.py

## test-integrations: install the integrations extra (OpenSpiel, Tianshou, TorchRL; torch held at 2.13.0) and run tests/test_integrations.py, slow ones included; then make test-benchmarl
.PHONY: test-integrations
test-integrations: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[integrations]" "torch==2.13.0"
	$(BIN)/python -m pytest --durations=10 tests/test_integrations.py
	$(MAKE) test-benchmarl

## test-benchmarl: BenchMARL's MAPPO and IQL on the env with trinity_env.integrations.benchmarl (tests/test_benchmarl.py), in .venv-benchmarl: BenchMARL 1.5 pins a TorchRL older than the integrations extra's
.PHONY: test-benchmarl
test-benchmarl:
	$(PYTHON) -m venv .venv-benchmarl
	.venv-benchmarl/bin/python -m pip install --quiet -e ".[benchmarl,onnx]" "torch==2.13.0" pytest
	.venv-benchmarl/bin/python -m pytest -q -p no:cacheprovider --durations=5 tests/test_benchmarl.py

## test-lowest: the env's tests under the lowest PettingZoo the project supports (1.23), in .venv-lowest
test-lowest:
	$(PYTHON) -m venv .venv-lowest
	.venv-lowest/bin/python -m pip install --quiet -e . "pettingzoo==1.23.0" pytest hypothesis
	.venv-lowest/bin/python -m pytest -q -p no:cacheprovider tests/test_env_aec.py tests/test_layers.py tests/test_copy_and_pickle.py tests/test_render.py

## test-jax: install the jax extra (jax, jaxlib, pgx; torch held at 2.13.0) in .venv-jax and run the JAX engine against the core move by move (the invariant suite's JAX cases, the Hypothesis fuzz, vmapped batches against games played one by one), Pgx's API test, the players and shipped networks in JAX against the agents and torch, and the self-play trainer's tests with jax-quick trained to its bar (e2e); CI runs it. Each function is compiled once a run: XLA's compilation cache (.venv-jax/xla-cache, 256 MB at most; remove it for a cold run) hands the trainer's run the update its tests compiled. The slow ones (-m slow) run by hand
.PHONY: test-jax
JAX_CACHE := JAX_COMPILATION_CACHE_DIR=$(CURDIR)/.venv-jax/xla-cache JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0 JAX_COMPILATION_CACHE_MAX_SIZE=268435456
test-jax:
	$(PYTHON) -m venv .venv-jax
	.venv-jax/bin/python -m pip install --quiet -e ".[dev,jax]" "torch==2.13.0"
	$(JAX_CACHE) .venv-jax/bin/python -m pytest -q -p no:cacheprovider --durations=15 -m "not slow" tests/test_jax*.py tests/test_invariants.py -k "jax"

## test-web: the web app's tests, in a real headless Chromium too (installs Debian's chromium and chromium-driver if missing, and the web extra with Playwright; never downloads a browser of Playwright's)
.PHONY: test-web
test-web: $(STAMP)
	@test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }
	$(BIN)/python -m pip install --quiet -e ".[web]" "playwright>=1.45"
	$(BIN)/python -m pytest --durations=10 tests/test_web_api_*.py tests/test_web_browser*.py tests/test_web_newcomer.py

## notebooks: install the notebooks extra (JupyterLab; torch held at 2.13.0) and open notebooks/ in JupyterLab
.PHONY: notebooks
notebooks: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[notebooks]" "torch==2.13.0"
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

## docs: install the docs extra and build the site into site/ (mkdocs.yml: the pages and an API reference from the docstrings), strict: a broken link, a page left out of the nav or an unreadable docstring fails
.PHONY: docs
docs: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	$(BIN)/mkdocs build --strict --quiet

## lint: ruff over the whole project: its checks, and its formatter finding nothing to change
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## bench: print the engine figures
bench: $(STAMP)
	$(BIN)/python -m benchmarks.engine
	$(BIN)/python -m benchmarks.env
	$(BIN)/python -m benchmarks.fast

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
