"""Run the official Go SDK's own emulator tests against cosmos-emulator.

`cargo xtask sdk-suites --sdk go` calls this; run it yourself with --help.
The module github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos ships its
emulator tests (`emulator_*_test.go`, Microsoft's, never committed here):
`go mod download` fetches the module from the Go module proxy, it is copied
into the work directory, and its emulator tests run with `go test` against
the emulator started as Microsoft's CI starts its own
(`/consistency=Strong`, HTTPS on https://localhost:8081/ with the
well-known key, `EMULATOR=true`). Microsoft's CI trusts the emulator's
certificate machine-wide; here `SSL_CERT_FILE` names a bundle of the
system's authorities and the emulator's certificate, which Go reads on
Linux. The tests' own code runs unchanged. Standard library only.

The emulator serves the SQL compute gateway on port 8903 too, as
Microsoft's emulator does with `/EnableSqlComputeEndpoint`
(`TestItemIdEncodingComputeGW` addresses it). It prints, and writes to
report.md, the counts per file and each failure with its first lines.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import ports

MODULE = "github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
PORT = 8081
COMPUTE_PORT = 8903

# Tests that need what is out of scope, by name, with the reason.
OUT_OF_SCOPE: Dict[str, str] = {}

# System authorities, where Debian and Fedora keep them.
SYSTEM_CAS = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


def download(version: str, workdir: Path) -> Path:
    """The module's source, copied writable into workdir."""
    found = subprocess.run(
        ["go", "mod", "download", "-json", f"{MODULE}@v{version}"],
        check=True, capture_output=True, text=True,
    )
    source = Path(json.loads(found.stdout)["Dir"])
    copy = workdir / f"azcosmos-{version}"
    if copy.exists():
        shutil.rmtree(copy, onerror=lambda f, p, _: (os.chmod(p, stat.S_IWRITE), f(p)))
    shutil.copytree(source, copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return copy


def emulator_tests(module: Path) -> Dict[str, str]:
    """Each emulator test's name and its file."""
    tests = {}
    for file in sorted(module.glob("emulator_*_test.go")):
        for name in re.findall(r"^func (Test\w+)\(t \*testing\.T\)", file.read_text(), re.M):
            tests[name] = file.name
    return tests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, type=Path, help="the cosmos-emulator binary")
    parser.add_argument("--workdir", required=True, type=Path, help="where the module and reports go")
    parser.add_argument("--version", default="1.5.0", help="the azcosmos version (default 1.5.0)")
    parser.add_argument("-run", dest="run", help="only tests whose names match this regular expression")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    ports.require_free(PORT, COMPUTE_PORT)

    module = download(args.version, args.workdir)
    tests = emulator_tests(module)
    selected = [t for t in tests if t not in OUT_OF_SCOPE and (not args.run or re.search(args.run, t))]
    cert = args.workdir / "emulator.pem"
    log = open(args.workdir / "emulator.log", "w")
    emulator = subprocess.Popen(
        [str(args.binary), "--port", str(PORT), "--compute-gateway-port", str(COMPUTE_PORT),
         "--tls", "--cert-out", str(cert),
         "--consistency", "strong", "--parent-pid", str(os.getpid())],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        ports.wait_for(PORT, 30)
        bundle = args.workdir / "trusted.pem"
        system = next((Path(p) for p in SYSTEM_CAS if Path(p).exists()), None)
        bundle.write_text((system.read_text() if system else "") + cert.read_text())
        env = dict(os.environ, EMULATOR="true", SSL_CERT_FILE=str(bundle))
        started = time.monotonic()
        ran = subprocess.run(
            ["go", "test", "-count=1", "-json", "-run", f"^({'|'.join(selected)})$", "."],
            cwd=module, env=env, capture_output=True, text=True,
        )
        seconds = time.monotonic() - started
    finally:
        emulator.send_signal(signal.SIGTERM)
        emulator.wait(timeout=30)

    outcome: Dict[str, str] = {}
    output: Dict[str, List[str]] = collections.defaultdict(list)
    for line in ran.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        test = event.get("Test", "")
        top = test.split("/")[0]
        if top not in tests:
            continue
        if event.get("Action") in ("pass", "fail", "skip") and "/" not in test:
            outcome[top] = event["Action"]
        elif event.get("Action") == "output":
            output[top].append(event["Output"].rstrip("\n"))
    if not outcome:
        print(ran.stdout[-4000:], ran.stderr[-4000:], sep="\n")
        raise SystemExit("go test reported no test: see above")

    per_file = collections.defaultdict(collections.Counter)
    for test, file in tests.items():
        per_file[file][OUT_OF_SCOPE.get(test) and "out of scope" or outcome.get(test, "not run")] += 1
    passed = sum(1 for o in outcome.values() if o == "pass")
    failed = [t for t, o in outcome.items() if o == "fail"]
    lines = [
        f"# azcosmos {args.version}: its emulator tests against cosmos-emulator", "",
        f"{passed} of {len(selected)} in scope pass ({100 * passed / max(len(selected), 1):.1f}%), "
        f"in {seconds:.0f} s; out of scope, by name: "
        + (", ".join(f"{t} ({why})" for t, why in OUT_OF_SCOPE.items()) or "none"), "",
        "| file | pass | fail | skip | out of scope |", "|---|---|---|---|---|",
    ]
    for file, counts in sorted(per_file.items()):
        lines.append(f"| {file} | {counts['pass']} | {counts['fail']} | {counts['skip']} | {counts['out of scope']} |")
    if failed:
        lines += ["", "## Failures", ""]
        for test in failed:
            said = [l for l in output[test] if l.strip() and not l.startswith(("=== ", "--- "))]
            lines += [f"### {test} ({tests[test]})", "", "```", *said[:12], "```", ""]
    report = "\n".join(lines) + "\n"
    (args.workdir / "report.md").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
