"""The site's compiled bytecode is cached by what its wheels hold (tools/pyodide_bytecode.py):
the course's wheel, rebuilt from the same sources at another time, finds the compiled copy
made before; a changed byte does not."""

from __future__ import annotations

import zipfile

from tools.pyodide_bytecode import _key


def _wheel(path, when, body=b"print('hi')\n"):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in (("course_lib/__init__.py", body), ("course_lib-1.0.dist-info/RECORD", b"r")):
            z.writestr(zipfile.ZipInfo(name, date_time=when), data)
    return path


def test_a_wheel_rebuilt_from_the_same_sources_has_the_same_key(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _wheel(tmp_path / "a" / "course_lib-1.0-py3-none-any.whl", (2026, 1, 1, 0, 0, 0))
    again = _wheel(tmp_path / "b" / "course_lib-1.0-py3-none-any.whl", (2026, 12, 4, 18, 0, 0))
    assert first.read_bytes() != again.read_bytes()  # the time stamps differ
    assert _key([first]) == _key([again])


def test_a_changed_source_changes_the_key(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    when = (2026, 1, 1, 0, 0, 0)
    first = _wheel(tmp_path / "a" / "course_lib-1.0-py3-none-any.whl", when)
    changed = _wheel(tmp_path / "b" / "course_lib-1.0-py3-none-any.whl", when, b"print('ho')\n")
    assert _key([first]) != _key([changed])
