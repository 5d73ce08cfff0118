"""The site build's slow steps are cached by what their inputs hold (tools/build_cache.py): the
course's wheel, rebuilt from the same sources at another time, finds the result made before
(the compiled bytecode, a demo's imports, a memory snapshot); a changed byte does not."""

from __future__ import annotations

import os
import zipfile

from tools.build_cache import key


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
    assert key([first]) == key([again])


def test_a_changed_source_changes_the_key(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    when = (2026, 1, 1, 0, 0, 0)
    first = _wheel(tmp_path / "a" / "course_lib-1.0-py3-none-any.whl", when)
    changed = _wheel(tmp_path / "b" / "course_lib-1.0-py3-none-any.whl", when, b"print('ho')\n")
    assert key([first]) != key([changed])


def test_a_step_is_made_once_per_inputs_and_the_least_recently_used_go(tmp_path, monkeypatch):
    from course_lib.cache import STAMP
    from tools.build_cache import cached

    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    made = []

    def make(text):
        def into(folder):
            made.append(text)
            (folder / "out").write_text(text)

        return into

    first = cached("step", ["a"], make("a"), keep=2)
    assert cached("step", ["a"], make("a"), keep=2) == first and made == ["a"]
    assert (first / "out").read_text() == "a"
    second = cached("step", ["b"], make("b"), keep=2)
    for entry, when in ((first, 1_000), (second, 2_000)):  # "a" made long before "b"
        os.utime(entry / STAMP, (when, when))
    cached("step", ["a"], make("a"), keep=2)  # used again: now the most recent
    cached("step", ["c"], make("c"), keep=2)  # makes room: "b" goes, "a" stays
    assert made == ["a", "b", "c"]
    assert cached("step", ["a"], make("a"), keep=2) == first and made == ["a", "b", "c"]
    assert len(list((tmp_path / "cache").glob("step-*"))) == 2
