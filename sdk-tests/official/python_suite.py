"""Run the official Python SDK's own tests against cosmos-emulator.

`cargo xtask sdk-suites` calls this; run it yourself with --help. It
downloads the azure-cosmos sdist from PyPI (its tests/ are Microsoft's,
never committed here), makes a virtualenv with that azure-cosmos and the
test runners, starts the emulator on https://localhost:8081/ (where the
tests look for Microsoft's emulator, with its well-known key), runs the
selected files with the markers of the single-region, master-key pipelines
(`cosmosEmulator`, `cosmosLong`, `cosmosQuery`), and prints per-file
counts and the failures grouped by cause. Standard library only.

The tests import one helper module of Microsoft's repository that is not
on PyPI, `devtools_testutils` (`is_live`, `get_credential`); a two-function
stand-in of our own is put on the path: `is_live()` is false (the emulator
is not a live account) and `get_credential()` refuses (a tenant's
credential is out of scope; the tests' own `CosmosEmulatorCredential`
works against the emulator).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import venv
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Dict, List, Optional, Tuple

# The markers name the pipelines that run a test; these four are the ones
# against a single-region account with the master key (the others: Entra
# ID, several regions, circuit breakers, splits that wait for the service's
# own partition splits, global secondary indexes). cosmosSearchQuery is the
# vector, full-text and hybrid search pipeline (issue 25).
MARKERS = ("cosmosEmulator", "cosmosLong", "cosmosQuery", "cosmosSearchQuery")
PORT = 8081

# Tests that need what is out of scope here (a real second region):
# counted apart, by words in the test's name, or by the file. Entra ID is
# in scope since issue 39: the emulator accepts the tokens of the tests'
# CosmosEmulatorCredential (`entra_token.rs`).
# Stored procedures, triggers and UDFs are in scope since issue 23; vector,
# full-text and hybrid search since issue 25.
# The *_emulator files fake several regions over one emulator with fault
# injection: they are in scope.
OUT_OF_SCOPE = {
    # A client-side unit test of path parsing that reads
    # BaselineTest.PathParser.json, which the sdist does not ship.
    "a file the sdist does not ship": (re.compile(r"test_partitioned_collection_path_parser"), None),
    "a real second region": (None, re.compile(r"^test_(globaldb|multimaster)\.py$")),
}

SHIM = {
    "__init__.py": '"""A stand-in for the helpers of Microsoft\'s repository that the tests import."""\n',
    "helpers.py": (
        '"""is_live(): the tests ask whether they run against a live account."""\n\n\n'
        "def is_live():\n"
        "    return getattr(is_live, '_cache', False)\n"
    ),
    "azure_recorded_testcase.py": (
        '"""get_credential(): a Microsoft Entra ID credential of a tenant, which the emulator suites do not use."""\n\n\n'
        "def get_credential(is_async=False, **kwargs):\n"
        "    raise RuntimeError('a tenant credential is out of scope against cosmos-emulator: the tests use CosmosEmulatorCredential')\n"
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the cosmos-emulator binary")
    parser.add_argument("--workdir", required=True, type=Path, help="where the sdist, virtualenv and reports go")
    parser.add_argument("--version", default="4.17.1", help="azure-cosmos version (default 4.17.1)")
    parser.add_argument("--kind", choices=["sync", "async", "all"], default="all")
    parser.add_argument("--files", nargs="*", help="test files to run (default: every file with the marker)")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per test (pytest-timeout)")
    parser.add_argument("--emulator-arg", action="append", default=[], help="more flags for the emulator")
    parser.add_argument("--report-from", type=Path, help="only summarise this JUnit file of an earlier run")
    args = parser.parse_args()

    workdir: Path = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    sdist = fetch_sdist(workdir, args.version)
    if args.report_from:
        results = read_junit(args.report_from)
        print_summary(results, select_files(sdist / "tests", args.kind, args.files), workdir / f"report-{args.kind}.md")
        return 0
    python = make_venv(workdir, args.version)
    shim = write_shim(workdir)
    files = select_files(sdist / "tests", args.kind, args.files)
    if not files:
        print("no test file selected", file=sys.stderr)
        return 2
    emulator = start_emulator(args.binary, workdir, args.emulator_arg)
    try:
        report = workdir / f"junit-{args.kind}.xml"
        run_pytest(python, sdist / "tests", files, shim, report, args.keyword, args.timeout)
    finally:
        stop(emulator)
    results = read_junit(report)
    print_summary(results, files, workdir / f"report-{args.kind}.md")
    return 0


def fetch_sdist(workdir: Path, version: str) -> Path:
    unpacked = workdir / f"azure_cosmos-{version}"
    if (unpacked / "tests").is_dir():
        return unpacked
    step(f"download the azure-cosmos {version} sdist (its tests/)")
    downloads = workdir / "downloads"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "-d", str(downloads), f"azure-cosmos=={version}"],
        check=True,
    )
    archive = next(downloads.glob(f"azure[-_]cosmos-{version}.tar.gz"))
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if not (m.issym() or m.islnk() or m.name.startswith("/") or ".." in m.name)]
        tar.extractall(workdir, members=members)
    return unpacked


def make_venv(workdir: Path, version: str) -> Path:
    env_dir = workdir / "venv"
    python = env_dir / "bin" / "python"
    marker = env_dir / f".installed-{version}"
    if marker.exists():
        return python
    step("make the virtualenv: azure-cosmos, aiohttp, requests, pytest, pytest-asyncio, pytest-timeout")
    if env_dir.exists():
        shutil.rmtree(env_dir)
    venv.create(env_dir, with_pip=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         f"azure-cosmos=={version}", "azure-core[aio]", "aiohttp", "requests",
         "pytest", "pytest-asyncio", "pytest-timeout"],
        check=True,
    )
    marker.touch()
    return python


def write_shim(workdir: Path) -> Path:
    root = workdir / "shim"
    package = root / "devtools_testutils"
    package.mkdir(parents=True, exist_ok=True)
    for name, text in SHIM.items():
        (package / name).write_text(text)
    return root


def select_files(tests: Path, kind: str, named: Optional[List[str]]) -> List[str]:
    if named:
        return [Path(f).name for f in named]
    files = []
    for path in sorted(tests.glob("test_*.py")):
        text = path.read_text(errors="replace")
        if not any(f"mark.{marker}" in text for marker in MARKERS):
            continue
        is_async = path.stem.endswith("_async")
        if kind == "all" or (kind == "async") == is_async:
            files.append(path.name)
    return files


def start_emulator(binary: str, workdir: Path, extra: List[str]) -> subprocess.Popen:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", PORT)) == 0:
            raise SystemExit(f"port {PORT} is taken: the tests expect the emulator at https://localhost:{PORT}/")
    step(f"start {binary} on https://localhost:{PORT}/ (system clock, as the suites expect)")
    log = open(workdir / "emulator.log", "wb")  # noqa: SIM115 - kept open while it runs
    process = subprocess.Popen(
        [binary, "--port", str(PORT), "--tls", "--clock", "system", "--parent-pid", str(os.getpid()), *extra],
        stdout=subprocess.PIPE, stderr=log, stdin=subprocess.PIPE,
    )
    line = process.stdout.readline().decode()
    if not line.startswith("listening on"):
        raise SystemExit(f"the emulator did not start ({line!r}); see {workdir / 'emulator.log'}")
    return process


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def run_pytest(python: Path, tests: Path, files: List[str], shim: Path, report: Path,
               keyword: Optional[str], timeout: int) -> None:
    expression = " or ".join(MARKERS)
    step(f"pytest -m '{expression}': {len(files)} files")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shim), str(tests)]))
    for name in ("ACCOUNT_HOST", "ACCOUNT_KEY"):
        env.pop(name, None)
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", expression,
               f"--junitxml={report}", "-o", "junit_family=xunit2", f"--timeout={timeout}",
               "-W", "ignore", "--tb=line", *files]
    if keyword:
        command += ["-k", keyword]
    started = time.monotonic()
    subprocess.run(command, cwd=tests, env=env, check=False)
    print(f"pytest took {time.monotonic() - started:.0f} s")


Result = Tuple[str, str, str, str]  # (file, test, outcome, message)


def read_junit(report: Path) -> List[Result]:
    results: List[Result] = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        # "tests.test_crud.TestCRUDOperations" (the rootdir is the sdist's,
        # above tests/), or "test_crud" for a module-level test.
        parts = case.get("classname", "").split(".")
        module = next((i for i, part in enumerate(parts) if part.startswith("test_")), 0)
        file = parts[module] + ".py"
        owner = parts[module + 1:] or [parts[module]]
        test = f"{owner[-1]}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            element = case.find(tag)
            if element is not None:
                outcome = "failed" if tag in ("failure", "error") else "skipped"
                message = (element.get("message") or element.text or "").strip()
                break
        results.append((file, test, outcome, message))
    return results


def cause(message: str) -> str:
    """A failure's cause, as a line that groups alike failures: the
    status and the start of the service's message, numbers and ids blurred."""
    first = message.splitlines()[0] if message else "(no message)"
    first = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27,}", "<id>", first)
    first = re.sub(r"'[^']{20,}'", "'<…>'", first)
    first = re.sub(r"\d+", "N", first)
    return first[:160]


def scope(file: str, test: str) -> Optional[str]:
    for why, (by_test, by_file) in OUT_OF_SCOPE.items():
        if (by_test and by_test.search(test)) or (by_file and by_file.search(file)):
            return why
    return None


def print_summary(results: List[Result], files: List[str], out: Path) -> None:
    per_file: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    causes: Dict[str, List[str]] = collections.defaultdict(list)
    counted = collections.Counter()
    for file, test, outcome, message in results:
        per_file[file][outcome] += 1
        if outcome == "skipped":
            continue
        excluded = scope(file, test)
        counted["out of scope" if excluded else outcome] += 1
        if outcome == "failed":
            causes[f"[{excluded}] " + cause(message) if excluded else cause(message)].append(f"{file}::{test}")
    lines = ["| file | passed | failed | skipped |", "|---|---:|---:|---:|"]
    for file in files:
        c = per_file.get(file, collections.Counter())
        lines.append(f"| {file} | {c['passed']} | {c['failed']} | {c['skipped']} |")
    in_scope = counted["passed"] + counted["failed"]
    share = 100.0 * counted["passed"] / in_scope if in_scope else 0.0
    lines += ["", f"In scope: {counted['passed']} passed, {counted['failed']} failed ({share:.1f}%); "
                  f"out of scope (a real second region, a file the sdist lacks): {counted['out of scope']}.", "",
              "Failures by cause (most first):", ""]
    for why, tests in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"- {len(tests)} × {why}")
        lines.extend(f"  - {t}" for t in tests)
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    print(text)
    print(f"{counted['passed']} passed, {counted['failed']} failed")
    print(f"(written to {out})")


def step(what: str) -> None:
    print(f"\n== sdk-suites: {what}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
