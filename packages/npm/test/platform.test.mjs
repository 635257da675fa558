// Which platform package the launcher looks for: one per platform, arch
// and (on Linux) C library, as npm picks them by their os, cpu and libc
// fields; and glibc told from musl as npm tells them (process.report).

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { platformPackage } from "cosmos-emulator";
import { PROJECT } from "./helpers.mjs";

const installed = join(PROJECT, "node_modules", "cosmos-emulator");
// lib/binary.js is not among the package's exports: loaded by its path.
const { libcFamily } = createRequire(import.meta.url)(join(installed, "lib", "binary.js"));
const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));

// Every release target: npm's process.platform, process.arch, libc.
const PLATFORMS = [
  ["linux", "x64", "glibc", "cosmos-emulator-linux-x64"],
  ["linux", "arm64", "glibc", "cosmos-emulator-linux-arm64"],
  ["linux", "x64", "musl", "cosmos-emulator-linux-x64-musl"],
  ["linux", "arm64", "musl", "cosmos-emulator-linux-arm64-musl"],
  ["darwin", "x64", null, "cosmos-emulator-darwin-x64"],
  ["darwin", "arm64", null, "cosmos-emulator-darwin-arm64"],
  ["win32", "x64", null, "cosmos-emulator-win32-x64"],
];

describe("platformPackage", () => {
  for (const [platform, arch, libc, expected] of PLATFORMS) {
    test(`${platform} ${arch} ${libc ?? ""} -> ${expected}`, () => {
      assert.equal(platformPackage(platform, arch, libc), expected);
    });
  }

  test("no musl suffix off Linux, whatever libc says", () => {
    assert.equal(platformPackage("darwin", "arm64", "musl"), "cosmos-emulator-darwin-arm64");
    assert.equal(platformPackage("win32", "x64", "glibc"), "cosmos-emulator-win32-x64");
  });

  test("a platform without a package still gets a name (for the error message)", () => {
    assert.equal(platformPackage("freebsd", "x64", null), "cosmos-emulator-freebsd-x64");
  });

  test("the names are exactly the main package's optionalDependencies, at its version", () => {
    const names = PLATFORMS.map(([, , , name]) => name).sort();
    assert.deepEqual(Object.keys(manifest.optionalDependencies).sort(), names);
    for (const [name, pin] of Object.entries(manifest.optionalDependencies)) {
      assert.equal(pin, manifest.version, name);
    }
  });

  test("on this machine: the package npm installed is the one the launcher looks for", () => {
    const platformPackages = readdirSync(join(PROJECT, "node_modules")).filter((n) => n.startsWith("cosmos-emulator-"));
    assert.deepEqual(platformPackages, [platformPackage()]);
  });
});

describe("libcFamily: glibc or musl, from process.report", () => {
  test("a report with header.glibcVersionRuntime: glibc", () => {
    assert.equal(libcFamily("linux", { header: { glibcVersionRuntime: "2.35" } }), "glibc");
  });

  test("a report without it (Alpine's node): musl, so the -musl package", () => {
    const report = { header: { osName: "Linux" } };
    assert.equal(libcFamily("linux", report), "musl");
    assert.equal(platformPackage("linux", "x64", libcFamily("linux", report)), "cosmos-emulator-linux-x64-musl");
  });

  test("no report: glibc", () => {
    assert.equal(libcFamily("linux", null), "glibc");
  });

  test("off Linux: none", () => {
    assert.equal(libcFamily("darwin", { header: {} }), null);
    assert.equal(libcFamily("win32"), null);
  });

  test("this Node: what its own report says", () => {
    const header = process.report.getReport().header;
    assert.equal(libcFamily(), header.glibcVersionRuntime ? "glibc" : "musl");
  });
});
