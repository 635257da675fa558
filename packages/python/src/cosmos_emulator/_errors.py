"""The exceptions of cosmos_emulator."""

from __future__ import annotations

from typing import Optional

__all__ = ["ControlError", "EmulatorError"]


class EmulatorError(RuntimeError):
    """The emulator could not be started, or stopped answering.

    ``returncode`` is the process's exit code when it had exited, and
    ``stderr`` the end of what it wrote to its standard error.
    """

    def __init__(self, message: str, *, returncode: Optional[int] = None, stderr: str = ""):
        if stderr:
            message = f"{message}\n--- cosmos-emulator stderr (last lines) ---\n{stderr.rstrip()}"
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class ControlError(EmulatorError):
    """A control request (clock, purge, reset, snapshots) was refused: the
    emulator's HTTP status and its ``{"code", "message"}`` body."""

    def __init__(self, method: str, path: str, status: int, code: str, message: str):
        super().__init__(f"{method} {path} -> {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
