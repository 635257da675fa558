"use strict";
// Where the emulator binary is: an option, COSMOS_EMULATOR_BINARY, or the
// platform package npm installed as an optional dependency.

const fs = require("node:fs");
const path = require("node:path");

const pkg = require("../package.json");

/**
 * The C library Node runs on, on Linux: "glibc" or "musl" (null elsewhere).
 * Read as npm reads it for a package's `libc` field (npm-install-checks),
 * and as detect-libc and the napi-rs loaders do: Node's diagnostic report
 * gives the glibc version it runs on as `header.glibcVersionRuntime`, and
 * has no such field on musl (Alpine). `report` stands in for
 * process.report.getReport() in tests.
 */
function libcFamily(platform = process.platform, report = undefined) {
  if (platform !== "linux") return null;
  if (report === undefined) {
    if (detected === undefined) detected = fromReport(diagnosticReport());
    return detected;
  }
  return fromReport(report);
}

let detected;

function fromReport(report) {
  const header = report && report.header;
  // No report (getReport failed): glibc, the common case.
  if (!header) return "glibc";
  return header.glibcVersionRuntime ? "glibc" : "musl";
}

/** process.report.getReport() without its network section (slow DNS lookups); null if it fails. */
function diagnosticReport() {
  const report = process.report;
  if (!report || typeof report.getReport !== "function") return null;
  const before = report.excludeNetwork;
  try {
    report.excludeNetwork = true;
    return report.getReport();
  } catch {
    return null;
  } finally {
    report.excludeNetwork = before;
  }
}

/**
 * The npm package carrying the binary for a platform, e.g.
 * cosmos-emulator-linux-x64, or cosmos-emulator-linux-x64-musl on musl.
 */
function platformPackage(platform = process.platform, arch = process.arch, libc = libcFamily(platform)) {
  const musl = platform === "linux" && libc === "musl" ? "-musl" : "";
  return `cosmos-emulator-${platform}-${arch}${musl}`;
}

/** "linux-x64 (musl)", "darwin-arm64": the platform in messages. */
function platformName(platform = process.platform, arch = process.arch, libc = libcFamily(platform)) {
  return platform === "linux" ? `${platform}-${arch} (${libc})` : `${platform}-${arch}`;
}

/**
 * The path of the emulator binary: `binary` if given, else the environment
 * variable COSMOS_EMULATOR_BINARY, else the file in the platform package.
 * Throws an Error saying what is missing and how to fix it.
 */
function binaryPath(options = {}) {
  const given = options.binary || process.env.COSMOS_EMULATOR_BINARY;
  if (given) {
    const from = options.binary ? "the `binary` option" : "COSMOS_EMULATOR_BINARY";
    if (!fs.existsSync(given)) {
      throw new Error(`cosmos-emulator: ${from} names ${given}, which does not exist`);
    }
    return path.resolve(given);
  }
  const name = platformPackage();
  const exe = process.platform === "win32" ? ".exe" : "";
  let found;
  try {
    found = require.resolve(`${name}/bin/cosmos-emulator${exe}`);
  } catch {
    throw new Error(missingPlatformPackage(name));
  }
  let version;
  try {
    version = require(`${name}/package.json`).version;
  } catch {
    version = undefined;
  }
  if (version !== pkg.version) {
    throw new Error(
      `cosmos-emulator: ${name} is version ${version}, but cosmos-emulator ${pkg.version} needs ` +
        `the same version; reinstall (npm install cosmos-emulator@${pkg.version}) so that ` +
        `npm installs ${name}@${pkg.version}, or set COSMOS_EMULATOR_BINARY`,
    );
  }
  return found;
}

function missingPlatformPackage(name) {
  const known = Object.keys(pkg.optionalDependencies || {});
  const where = platformName();
  if (!known.includes(name)) {
    return (
      `cosmos-emulator: there is no prebuilt emulator for ${where} ` +
      `(platform packages: ${known.join(", ") || "none"}). Build one with a Rust toolchain ` +
      "(cargo install --path emulator in the emulator's repository) and set " +
      "COSMOS_EMULATOR_BINARY to its path, or pass the `binary` option."
    );
  }
  return (
    `cosmos-emulator: the package ${name}, which carries the emulator binary for ${where}, ` +
    "is not installed. npm installs it as an optional dependency of cosmos-emulator, so it is " +
    "missing when optional dependencies were left out (npm install --omit=optional or --no-optional, the npm " +
    "config omit=optional, yarn --ignore-optional) or when " +
    "node_modules or the lockfile was made on another platform. Fix: reinstall without " +
    `omitting optional dependencies, or add it yourself: npm install ${name}@${pkg.version}. ` +
    "Or set COSMOS_EMULATOR_BINARY to a cosmos-emulator binary." +
    (libcFamily() === "musl"
      ? " (This Node runs on musl libc: its process.report has no glibcVersionRuntime, so it " +
        "needs the -musl package, not the glibc one.)"
      : "")
  );
}

module.exports = { binaryPath, libcFamily, platformPackage };
