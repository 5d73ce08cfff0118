# Every target brings .venv up to date with pyproject.toml first, so a fresh clone needs no other step.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test bench demo clean exercises grade

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

exercises: $(STAMP)  ## regenerate exercises/ (learners) and solutions/ (instructors) from exercises_src/
	$(PY) -m course_lib.grading generate

grade: $(STAMP)  ## grade a folder of submitted notebooks: make grade SUBMISSIONS=path/to/folder
	@test -n "$(SUBMISSIONS)" || (echo "usage: make grade SUBMISSIONS=folder-of-notebooks [OUT=scores.csv]"; exit 2)
	$(PY) -m course_lib.grading grade "$(SUBMISSIONS)" --out "$(or $(OUT),scores.csv)"

bench: $(STAMP)  ## print the benchmark tables
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
