"""Run the official JavaScript SDK's own integration tests against cosmos-emulator.

`cargo xtask sdk-suites --sdk js --source DIR` calls this; run it yourself
with --help. The tests are Microsoft's (`sdk/cosmosdb/cosmos/test` of
Azure/azure-sdk-for-js), never committed here, and not published on npm:
`--source` names a checkout of that repository at the release commit of the
@azure/cosmos version tested (4.7.0: cd1eb60d60d9b84fa813b49b6c3bf5acc6f1be14),
e.g.

    git clone --filter=blob:none --sparse https://github.com/Azure/azure-sdk-for-js
    cd azure-sdk-for-js && git sparse-checkout set sdk/cosmosdb/cosmos/test
    git checkout cd1eb60d60d9b84fa813b49b6c3bf5acc6f1be14

The test files are copied, unchanged, into the work directory, beside a
package.json that installs that @azure/cosmos from npm with the test
runners at pinned versions, and a vitest configuration that points the
tests' relative imports of the SDK's sources at the published package's
built ES modules
(as Microsoft's CI runs them against `dist/esm`) and selects what its
`vitest.int.config.ts` selects (`test/public/**/*.spec.ts`, one file at a
time). The release emulator is started on https://localhost:8081/, where
the tests look for Microsoft's emulator with its well-known key
(`ACCOUNT_HOST`; their configuration turns TLS verification off for
localhost). Standard library only.

As in Microsoft's CI (its emulator started with `/EnableSqlComputeEndpoint`),
the emulator serves the SQL compute gateway on port 8903 too
(`--compute-gateway-port 8903`), which the `CGW_` tests address.

It prints, and writes to report.md, the counts per file and each failure
with its first line.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import ports

PORT = 8081
COMPUTE_PORT = 8903
TESTS = Path("sdk/cosmosdb/cosmos/test")

# The SDK under test, and what its tests import or run with, pinned.
PACKAGES = {
    "@azure/cosmos": "4.7.0",
    "@azure/abort-controller": "2.1.2",
    "@azure/core-auth": "1.10.1",
    "@azure/core-rest-pipeline": "1.24.0",
    "@azure/core-util": "1.13.1",
    "@azure/identity": "4.13.1",
    "@azure/keyvault-keys": "4.10.2",
    "@azure/logger": "1.3.0",
    "assertion-error": "2.0.1",
    "dotenv": "16.6.1",
    "nock": "14.0.17",
    "proxy-agent": "6.5.0",
    "vitest": "3.2.7",
}

VITEST_CONFIG = """\
// Written by sdk-tests/official/js_suite.py: the tests' relative imports
// of the SDK's sources resolve to the published package's built modules.
import path from "node:path";
import { defineConfig } from "vitest/config";

const dist = path.resolve("node_modules/@azure/cosmos/dist/esm");
export default defineConfig({
  resolve: { alias: [{ find: /^(?:\\.\\.\\/)+src\\/(.*)$/, replacement: `${dist}/$1` }] },
  test: {
    include: ["test/public/**/*.spec.ts"],
    fileParallelism: false,
    testTimeout: 200000,
    hookTimeout: 200000,
    reporters: ["default", "json"],
    outputFile: { json: "results.json" },
  },
});
"""


def prepare(source: Path, workdir: Path) -> None:
    tests = source / TESTS
    if not (tests / "public").is_dir():
        raise SystemExit(f"{tests}/public is missing: --source names a checkout of azure-sdk-for-js")
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(workdir / "test", ignore_errors=True)
    shutil.copytree(tests, workdir / "test")
    package = {"name": "cosmos-js-official-suite", "private": True, "type": "module",
               "dependencies": PACKAGES}
    manifest = workdir / "package.json"
    text = json.dumps(package, indent=2) + "\n"
    changed = not manifest.exists() or manifest.read_text() != text
    manifest.write_text(text)
    (workdir / "vitest.config.mjs").write_text(VITEST_CONFIG)
    if changed or not (workdir / "node_modules" / "@azure" / "cosmos").exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=workdir, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, type=Path, help="the cosmos-emulator binary")
    parser.add_argument("--workdir", required=True, type=Path, help="where the tests, packages and reports go")
    parser.add_argument("--source", required=True, type=Path, help="a checkout of Azure/azure-sdk-for-js")
    parser.add_argument("files", nargs="*", help="only these spec files (paths under test/public/)")
    args = parser.parse_args()
    ports.require_free(PORT, COMPUTE_PORT)
    prepare(args.source, args.workdir)
    results = args.workdir / "results.json"
    results.unlink(missing_ok=True)
    log = open(args.workdir / "emulator.log", "w")
    emulator = subprocess.Popen(
        [str(args.binary), "--port", str(PORT), "--compute-gateway-port", str(COMPUTE_PORT),
         "--tls", "--parent-pid", str(os.getpid())],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        ports.wait_for(PORT, 30)
        env = dict(os.environ, ACCOUNT_HOST=f"https://localhost:{PORT}")
        started = time.monotonic()
        subprocess.run(["npx", "vitest", "run", *[f"test/public/{f}" for f in args.files]],
                       cwd=args.workdir, env=env)
        seconds = time.monotonic() - started
    finally:
        emulator.send_signal(signal.SIGTERM)
        emulator.wait(timeout=30)
    if not results.exists():
        raise SystemExit("vitest wrote no results.json: see its output above")

    per_file = collections.defaultdict(collections.Counter)
    failures = []
    counted = collections.Counter()
    for file in json.loads(results.read_text())["testResults"]:
        name = file["name"].split("/test/public/")[-1]
        for test in file["assertionResults"]:
            status = test["status"]
            if status in ("pending", "todo"):
                status = "skipped"
            per_file[name][status] += 1
            counted[status] += 1
            if status == "failed":
                message = (test.get("failureMessages") or [""])[0].splitlines()
                failures.append((name, test["fullName"], message[0] if message else ""))
    ran = counted["passed"] + counted["failed"]
    lines = [
        f"# @azure/cosmos {PACKAGES['@azure/cosmos']}: its integration tests against cosmos-emulator", "",
        f"{counted['passed']} of {ran} pass ({100 * counted['passed'] / max(ran, 1):.1f}%), "
        f"in {seconds:.0f} s; skipped by the tests themselves: {counted['skipped']}.", "",
        "| file | passed | failed | skipped |", "|---|---:|---:|---:|",
    ]
    for name, c in sorted(per_file.items()):
        lines.append(f"| {name} | {c['passed']} | {c['failed']} | {c['skipped']} |")
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- `{name}` {title}: {first[:200]}" for name, title, first in failures]
    report = "\n".join(lines) + "\n"
    (args.workdir / "report.md").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
