# Every target brings .venv up to date with pyproject.toml first, so a fresh clone needs no other step.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# `make lab` and `make demo` only need the [lab] extra (a fast first run); `make test` needs them all.
LAB_STAMP := $(VENV)/.installed-lab
# `make site` and `make site-offline` only need the [site] extra (JupyterLite), not Spark or the hub.
SITE_STAMP := $(VENV)/.installed-site

.PHONY: lab test test-fresh prepare check bench versions demo clean strip exercises grade site site-offline client-suites

# .venv with one extra of pyproject.toml (the editable course package and what the extra needs)
define install_extra
	@$(PYTHON) -c 'import sys; sys.exit("Python >= 3.11 is required (found %s)" % sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(1)]'
endef

$(STAMP): pyproject.toml
	$(call install_extra,all)
	touch $(STAMP) $(LAB_STAMP) $(SITE_STAMP)

$(LAB_STAMP): pyproject.toml
	$(call install_extra,lab)
	touch $(LAB_STAMP)

$(SITE_STAMP): pyproject.toml
	$(call install_extra,site)
	touch $(SITE_STAMP)

# Jupyter refuses to run as root (containers, some VMs) unless told; only then is the flag passed.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
# The file browser shows the repository root (lessons, exercises/, datasets/, README: the lessons'
# links to ../exercises/ work) without the test and build clutter.
HIDE := __pycache__ '*.pyc' '*.egg-info' conftest.py STYLE.md artifacts _site _site_offline .DS_Store '*~'

lab: $(LAB_STAMP)  ## open the course in JupyterLab (in-memory broker: no Java or Kafka needed)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ALLOW_ROOT) \
	  --LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb \
	  $(foreach g,$(HIDE),--ContentsManager.hide_globs=$(g))

# Three processes on two cores: much of the suite waits (on timeouts, JVMs, browsers), so a third
# fills what the waits leave; tests/xdist_groups.py keeps what shares a fixture or a notebook
# kernel together.
TEST_PROCESSES ?= 3
test: $(STAMP)  ## run the whole test suite (and list its 25 slowest tests)
	$(PY) -m pytest -n $(TEST_PROCESSES) --durations=25 $(PYTEST_ARGS)

# Every download the labs and the tests use, into the course cache, once (tools/prepare.py): the
# Kafka and Spark jars, the Java client's driver, Pyodide, the slides' and the site's npm packages.
prepare: $(STAMP)  ## download everything the labs and tests use into the course cache (.ci/run does)
	$(PY) -m tools.prepare

# What a fresh machine sees: .ci/run on a new clone of HEAD with an empty course cache and an empty
# Maven repository (both in a temporary folder), so nothing cached here hides a missing step. Run it
# before pushing a change to installs, caches, fixtures or .ci/run.
test-fresh:  ## run .ci/run on a clean clone of HEAD with empty caches (~45 min)
	bash .ci/run --fresh

# The fast loop while changing the simulator, the checker, the scenarios on the simulator, the
# exercises or the grader, and the lint: their tests and course_lib's doctests, no notebooks, no
# JVM, no browser. `make test` before you commit.
CHECK_TESTS := \
  tests/test_log.py tests/test_replication.py tests/test_replication_invariants.py tests/test_truncation.py \
  tests/test_election.py tests/test_network.py tests/test_loop.py tests/test_producer.py \
  tests/test_producer_state.py tests/test_consumer.py tests/test_consumer_properties.py \
  tests/test_consumer_groups.py tests/test_consumer_group_runs.py tests/test_transactions.py \
  tests/test_properties.py tests/test_golden.py tests/test_fidelity.py tests/test_backend.py \
  tests/test_checker.py tests/test_scenarios.py tests/test_processing.py \
  tests/test_grading.py tests/test_grading_predict.py tests/test_lint.py tests/test_ci_skips.py \
  tests/test_layers.py tests/test_import_cycles.py tests/test_inspect.py tests/test_nemesis.py tests/test_consumer_api.py \
  tests/test_cache.py course_lib
check: $(STAMP)  ## the fast loop: simulator, checker, scenarios, exercises and lint (1.5-3 min)
	$(PY) -m pytest --durations=10 $(CHECK_TESTS) $(PYTEST_ARGS)

# Voila apps, code hidden, on 127.0.0.1 only; idle kernels are shut down after 10 minutes.
# The "course" template (share/jupyter/voila/templates/course) is Voila's lab template without its
# CDN stylesheets: the demos work offline.
DEMO_PORT ?= 8866
demo: $(LAB_STAMP)  ## serve the demos (notebooks/demos) with Voila on http://127.0.0.1:$(DEMO_PORT)
	@echo "Demo gallery: http://127.0.0.1:$(DEMO_PORT)/voila/render/index.ipynb"
	JUPYTER_PATH="$(CURDIR)/share/jupyter" $(VENV)/bin/voila notebooks/demos --no-browser --template=course \
	  --Voila.ip=127.0.0.1 --port=$(DEMO_PORT) \
	  --strip_sources=True --show_tracebacks=False \
	  --MappingKernelManager.cull_idle_timeout=600 --MappingKernelManager.cull_interval=60

strip: $(STAMP)  ## strip notebook outputs except the cells nbval checks (after editing a lesson: add --execute)
	$(PY) tools/notebook_outputs.py notebooks

exercises: $(STAMP)  ## regenerate exercises/ (learners) and solutions/ (instructors) from exercises_src/
	$(PY) -m course_lib.grading generate

# Learner code runs in a bubblewrap sandbox (no network, no access to your files, CPU/memory/process/
# output limits, killed with everything it started on timeout); without bwrap the grader refuses.
# SECRET_FILE: the secret the hidden seeds come from (else $$COURSE_GRADING_SECRET, else a public default).
# GRADE_ARGS: more options, e.g. --no-sandbox (learner code then runs as you) or --jobs 4.
grade: $(STAMP)  ## grade submitted notebooks in a sandbox: make grade SUBMISSIONS=folder [SECRET_FILE=f] [OUT=scores.csv]
	@test -n "$(SUBMISSIONS)" || (echo "usage: make grade SUBMISSIONS=folder-of-notebooks [SECRET_FILE=file] [OUT=scores.csv] [GRADE_ARGS=--no-sandbox]"; exit 2)
	$(PY) -m course_lib.grading grade "$(SUBMISSIONS)" --out "$(or $(OUT),scores.csv)" \
	  $(if $(SECRET_FILE),--secret-file "$(SECRET_FILE)") $(GRADE_ARGS)

site: $(SITE_STAMP)  ## build the course as a static site in _site/ (lessons 00-08, exercises, demos; runs in the browser)
	$(PY) tools/site_build.py --out _site

# The same site with the Pyodide runtime inside (npm's package, cached in ~/.cache/kafka-delivery-course):
# no internet needed to use it (a USB stick, a workshop without network); plots are skipped there.
site-offline: $(SITE_STAMP)  ## build a self-contained copy of the site in _site_offline/ (needs node and npm to build)
	$(PY) tools/site_build.py --offline --out _site_offline

# kafka-python's own integration tests (test/integration/ of the pinned release's sdist, fetched
# into the course cache) against the wire cluster and a LocalCluster (the lab's Kafka), one test per
# process: the passed/failed/skipped table per cluster and the tests that differ (issue 39).
# Uses .venv as it is (no install step: it needs kafka-python, pytest and pytest-timeout).
# CLIENT_SUITES_ARGS: e.g. --cluster wire, -k producer, --save run.json, --compare run.json.
client-suites:  ## run kafka-python's integration suite on the wire cluster and on Kafka, print the table
	$(PY) tools/client_suites.py $(CLIENT_SUITES_ARGS)

bench: $(STAMP)  ## print the benchmark tables
	$(PY) -m bench

versions: $(STAMP)  ## every experiment on each Kafka release (needs Java, ~30 min): the README's version table
	$(PY) -m bench versions

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis _site _site_offline

# JupyterLab settings the course ships (share/jupyter/lab/settings/overrides.json: no news toast, no
# update check on first open), as the venv's app settings: `make lab` installs them.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/kafka-delivery-course.json
lab-settings: $(LAB_OVERRIDES)  ## install the course's JupyterLab settings into the venv
$(LAB_OVERRIDES): share/jupyter/lab/settings/overrides.json
	mkdir -p $(dir $@)
	cp $< $@

# A learner's autosaved outputs never block `git pull`: git sees notebooks through tools/notebook_filter.py
# (outputs stripped), as .gitattributes says. Outside a git checkout (a zip download) there is nothing to do.
git-filter:  ## strip notebook outputs from what git sees (a learner's runs never block a git pull)
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  git config filter.course-notebook.clean "python3 tools/notebook_filter.py %f" && \
	  git config filter.course-notebook.smudge cat && \
	  echo "git: notebook outputs are stripped from what git sees (filter course-notebook)"; fi

update: git-filter  ## get the course's updates: git pull, past notebooks you only ran (edits stay yours)
	python3 tools/notebook_filter.py --refresh
	git pull

# Output text wraps at spaces, not mid-word: the course's custom.css, served by JupyterLab where it looks
# for one (jupyter_server's static/custom folder of this venv), switched on by the venv's jupyter_lab_config.json.
lab-css: $(LAB_STAMP)  ## install the course's JupyterLab style sheet into the venv
	mkdir -p $(VENV)/etc/jupyter
	cp share/jupyter/jupyter_lab_config.json $(VENV)/etc/jupyter/jupyter_lab_config.json
	$(PY) -c 'import pathlib, shutil, jupyter_server; d = pathlib.Path(jupyter_server.__file__).parent / "static" / "custom"; d.mkdir(exist_ok=True); shutil.copy("share/jupyter/lab/custom/custom.css", d)'

lab: lab-settings lab-css git-filter
.PHONY: lab-settings lab-css git-filter update

# Instructor slides: each lesson run once and made into reveal.js slides (tools/lesson_slides.py): a
# question slide per prediction, the run's table or figure, the answer and the talking points of
# workshop/notes/NN.md as speaker notes (press S). reveal.js comes from npm into the course cache once;
# the slides then work offline. Generated into artifacts/slides/, never committed.
slides: $(LAB_STAMP)  ## instructor slides of every lesson, offline, with speaker notes (artifacts/slides/)
	$(PY) -m tools.lesson_slides $(SLIDES_ARGS)
.PHONY: slides
