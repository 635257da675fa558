"""``python -m cosmos_emulator [flags]``: runs the cosmos-emulator binary
that came with the package (see ``cosmos-emulator --help``)."""

from __future__ import annotations

import os
import subprocess
import sys

from ._emulator import EmulatorError, find_binary


def main() -> int:
    try:
        binary = find_binary()
    except EmulatorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if os.name == "posix":
        os.execv(binary, [binary, *sys.argv[1:]])
    return subprocess.call([binary, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
