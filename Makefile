# Every target brings .venv up to date with pyproject.toml first, so a fresh clone needs no other step.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test bench demo clean strip exercises grade site

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Python >= 3.11 is required (found %s)" % sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all]'
	touch $(STAMP)

lab: $(STAMP)  ## open the course in JupyterLab (in-memory broker: no Java or Kafka needed)
	$(VENV)/bin/jupyter lab notebooks/

test: $(STAMP)  ## run the whole test suite
	$(PY) -m pytest $(PYTEST_ARGS)

# Voila apps, code hidden, on 127.0.0.1 only; idle kernels are shut down after 10 minutes.
DEMO_PORT ?= 8866
demo: $(STAMP)  ## serve the demos (notebooks/demos) with Voila on http://127.0.0.1:$(DEMO_PORT)
	$(VENV)/bin/voila notebooks/demos --no-browser --Voila.ip=127.0.0.1 --port=$(DEMO_PORT) \
	  --strip_sources=True --show_tracebacks=False \
	  --MappingKernelManager.cull_idle_timeout=600 --MappingKernelManager.cull_interval=60

strip: $(STAMP)  ## strip notebook outputs except the cells nbval checks (after editing a lesson: add --execute)
	$(PY) tools/notebook_outputs.py notebooks

exercises: $(STAMP)  ## regenerate exercises/ (learners) and solutions/ (instructors) from exercises_src/
	$(PY) -m course_lib.grading generate

grade: $(STAMP)  ## grade a folder of submitted notebooks: make grade SUBMISSIONS=path/to/folder
	@test -n "$(SUBMISSIONS)" || (echo "usage: make grade SUBMISSIONS=folder-of-notebooks [OUT=scores.csv]"; exit 2)
	$(PY) -m course_lib.grading grade "$(SUBMISSIONS)" --out "$(or $(OUT),scores.csv)"

site: $(STAMP)  ## build the course as a static site in _site/ (lessons 00-08, exercises, demos; runs in the browser)
	$(PY) tools/site_build.py --out _site

bench: $(STAMP)  ## print the benchmark tables
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis _site
