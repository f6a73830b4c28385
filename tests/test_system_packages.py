"""deploy/system.py: make test and make serve install their Debian packages or name the command."""

import importlib.util

import pytest

from harness.helpers import ROOT

spec = importlib.util.spec_from_file_location("system", ROOT / "deploy" / "system.py")
system = importlib.util.module_from_spec(spec)
spec.loader.exec_module(system)


def test_what_the_tests_need_includes_what_serving_needs():
    assert set(system.SERVE) <= set(system.TEST)
    assert {"chromium", "podman", "runc", "debootstrap", "libseccomp2", "fonts-noto-cjk"} <= set(system.TEST)
    assert "fonts-noto-cjk" not in system.SERVE  # a font for the tests' browser only: the app ships none


def test_a_missing_package_without_root_stops_with_the_one_command_to_run(monkeypatch, tmp_path):
    monkeypatch.setitem(system.NEEDS, "test", {"no-such-package-here": str(tmp_path / "absent")})
    monkeypatch.setattr(system.os, "geteuid", lambda: 1000)
    with pytest.raises(SystemExit) as stopped:
        system.ensure("test")
    assert "sudo apt-get install -y no-such-package-here" in str(stopped.value)


def test_nothing_is_installed_when_everything_is_there(monkeypatch, tmp_path):
    present = tmp_path / "present"
    present.write_text("")
    monkeypatch.setitem(system.NEEDS, "test", {"some-package": str(present)})
    monkeypatch.setattr(system.subprocess, "run", lambda *a, **k: pytest.fail("ran apt-get"))
    system.ensure("test")
    assert system.missing("test") == []
