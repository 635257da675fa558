"""Finding the cosmos-emulator binary the wheel installed, and what it supports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from typing import Dict, List, Optional, Union

from ._errors import EmulatorError

__all__ = ["BINARY_ENV", "find_binary", "supports_parent_pid"]

#: An environment variable naming the binary to run; it wins over the one
#: installed with the package.
BINARY_ENV = "COSMOS_EMULATOR_BINARY"

_BINARY_NAME = "cosmos-emulator.exe" if os.name == "nt" else "cosmos-emulator"


def _scripts_dirs() -> List[str]:
    """Where an installed wheel puts its scripts: this interpreter's scheme,
    the user scheme (pip install --user), the base interpreter's (a virtualenv
    with --system-site-packages), ``bin/`` beside the package's directory
    (pip install --target), then beside the interpreter."""
    dirs: List[str] = []
    try:
        dirs.append(sysconfig.get_path("scripts"))
    except (KeyError, ValueError):
        pass
    try:
        if hasattr(sysconfig, "get_preferred_scheme"):  # Python 3.10+
            user_scheme = sysconfig.get_preferred_scheme("user")
        elif sys.platform == "darwin" and sys._framework:  # type: ignore[attr-defined]
            user_scheme = "osx_framework_user"
        else:
            user_scheme = f"{os.name}_user"
        dirs.append(sysconfig.get_path("scripts", user_scheme))
    except (KeyError, ValueError, AttributeError):
        pass
    try:
        base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
        dirs.append(sysconfig.get_path("scripts", vars=base))
    except (KeyError, ValueError):
        pass
    dirs.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"))
    if sys.executable:
        dirs.append(os.path.dirname(sys.executable))
    unique: List[str] = []
    for d in dirs:
        if d and d not in unique:
            unique.append(d)
    return unique


def _check_executable(path: str, source: str) -> str:
    if not os.path.exists(path):
        raise EmulatorError(f"the cosmos-emulator binary {path!r} ({source}) does not exist")
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise EmulatorError(f"the cosmos-emulator binary {path!r} ({source}) is not an executable file")
    return os.path.abspath(path)


def find_binary(binary: Optional[Union[str, "os.PathLike[str]"]] = None) -> str:
    """The path of the cosmos-emulator binary to run.

    In order: ``binary`` if given, else ``$COSMOS_EMULATOR_BINARY``, else the
    ``cosmos-emulator`` that the wheel installed beside this interpreter's
    scripts (the virtualenv's ``bin/``, or the user scheme's), else the first
    one on ``PATH``. Raises EmulatorError naming every place it looked.
    """
    if binary is not None:
        path = os.fspath(binary)
        if os.sep not in path and not (os.altsep and os.altsep in path):
            found = shutil.which(path)
            if found is None:
                raise EmulatorError(f"binary={path!r}: no such program on PATH")
            return found
        return _check_executable(path, "the binary argument")
    from_env = os.environ.get(BINARY_ENV)
    if from_env:
        return _check_executable(from_env, f"${BINARY_ENV}")
    looked: List[str] = []
    for d in _scripts_dirs():
        candidate = os.path.join(d, _BINARY_NAME)
        looked.append(candidate)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(_BINARY_NAME)
    if found:
        return found
    looked.append(f"{_BINARY_NAME} on PATH")
    raise EmulatorError(
        "cannot find the cosmos-emulator binary; looked at:\n  "
        + "\n  ".join(looked)
        + f"\nInstall the package's wheel into this interpreter (pip install cosmos-emulator), "
        f"or name the binary with ${BINARY_ENV} or start(binary=...)."
    )


_parent_pid_support: Dict[str, bool] = {}
_parent_pid_lock = threading.Lock()


def supports_parent_pid(binary: str) -> bool:
    """Whether this binary has --parent-pid (asked once per binary, through --help)."""
    with _parent_pid_lock:
        known = _parent_pid_support.get(binary)
        if known is None:
            try:
                out = subprocess.run(
                    [binary, "--help"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    timeout=10,
                    check=False,
                ).stdout
                known = b"--parent-pid" in out
            except (OSError, subprocess.SubprocessError):
                known = False
            _parent_pid_support[binary] = known
        return known
