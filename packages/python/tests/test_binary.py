"""How the module finds the binary that the wheel installed, as it would on
Windows: there the win_amd64 wheel's script is ``cosmos-emulator.exe`` (in
the virtualenv's ``Scripts``). The module is imported afresh with
``os.name`` set to ``"nt"``, so that whatever it derives from ``os.name``,
at import or at the call, is what Windows would give it."""

from __future__ import annotations

import importlib.util
import os

import pytest

import cosmos_emulator
from cosmos_emulator import EmulatorError


def load_binary_module(os_name: str):
    """A fresh copy of cosmos_emulator._binary, imported while os.name is os_name."""
    path = os.path.join(os.path.dirname(cosmos_emulator.__file__), "_binary.py")
    spec = importlib.util.spec_from_file_location(f"cosmos_emulator._binary_on_{os_name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def scripts(tmp_path, monkeypatch, clean_env):
    """A scripts directory holding only cosmos-emulator.exe, and nothing on PATH."""
    scripts = tmp_path / "Scripts"
    scripts.mkdir()
    exe = scripts / "cosmos-emulator.exe"
    exe.write_bytes(b"MZ")
    exe.chmod(0o755)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return scripts


def find_as_on(os_name: str, scripts, monkeypatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(os, "name", os_name)
        binary = load_binary_module(os_name)
        patch.setattr(binary, "_scripts_dirs", lambda: [str(scripts)])
        return binary.find_binary()


def test_on_windows_it_finds_cosmos_emulator_exe_in_the_scripts(scripts, monkeypatch):
    assert find_as_on("nt", scripts, monkeypatch) == str(scripts / "cosmos-emulator.exe")


def test_elsewhere_a_file_named_exe_is_not_taken(scripts, monkeypatch):
    with pytest.raises(EmulatorError) as error:
        find_as_on("posix", scripts, monkeypatch)
    looked = str(error.value)
    assert os.path.join(str(scripts), "cosmos-emulator") + "\n" in looked
    assert "cosmos-emulator.exe" not in looked


def test_on_windows_the_error_names_the_exe(scripts, monkeypatch):
    (scripts / "cosmos-emulator.exe").unlink()
    with pytest.raises(EmulatorError) as error:
        find_as_on("nt", scripts, monkeypatch)
    assert os.path.join(str(scripts), "cosmos-emulator.exe") in str(error.value)
