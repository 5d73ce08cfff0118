"""The build's one step pyproject.toml cannot declare: the data sets live at the top of the
repository (``datasets/``, as the course's design lays it out) and ship inside the package as
``course_lib/data/``, where :mod:`course_lib.datasets` finds them with ``importlib.resources``
under a non-editable install (tests/test_datasets.py, tests/test_install.py).

setuptools maps packages, not data folders, into a wheel: a ``course_lib.data`` package mapped to
``datasets/`` would need every package listed by hand instead of found. So ``build_py`` copies the
shipped files after building the code. An editable install (and a checkout on ``PYTHONPATH``) reads
``datasets/`` in place. Everything else about the build is in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: what the library reads at run time: the data and their cards (course_lib.datasets,
#: course_lib.spark.orders); the generators are authoring tools and stay in the repository
SHIPPED = ("*/*.csv", "*/*.jsonl", "*/*.json", "*/README.md")


class BuildWithDatasets(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the checkout's datasets/ is read in place
        target = Path(self.build_lib) / "course_lib" / "data"
        for pattern in SHIPPED:
            for path in sorted((ROOT / "datasets").glob(pattern)):
                dest = target / path.relative_to(ROOT / "datasets")
                self.mkpath(str(dest.parent))
                self.copy_file(str(path), str(dest))


setup(cmdclass={"build_py": BuildWithDatasets})
