// Starting: every failure says why with the emulator's stderr tail; the
// binary is found in the platform package (or not, with the fix named);
// the `cosmos-emulator` bin passes arguments, exit codes and signals.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { startEmulator, binaryPath, platformPackage, version } from "cosmos-emulator";
import { PROJECT, WINDOWS, firstLine, isGone, posixOnly, run, waitFor } from "./helpers.mjs";

// npm's shim for the bin; on Windows a .cmd, which Node runs only through
// a shell (since 20.12.2).
const LAUNCHER = join(PROJECT, "node_modules", ".bin", WINDOWS ? "cosmos-emulator.cmd" : "cosmos-emulator");
const runLauncher = (args) => (WINDOWS ? run(`"${LAUNCHER}"`, args, { shell: true }) : run(LAUNCHER, args));

describe("start failures", () => {
  test("a flag the binary does not know: exit code 2 and its message", async () => {
    await assert.rejects(startEmulator({ args: ["--no-such-flag"] }), (e) => {
      assert.match(e.message, /did not start: the emulator exited with code 2 before it listened/);
      assert.match(e.message, /unexpected argument '--no-such-flag'/);
      assert.match(e.message, /command: .*cosmos-emulator(\.exe)? .*--no-such-flag/);
      return true;
    });
  });

  test("a bad value: the binary's own message", async () => {
    await assert.rejects(startEmulator({ ranges: 5000 }), /5000 is not in 1\.\.=1000/);
  });

  test("a port in use: the exit code and the emulator's reason", async () => {
    const first = await startEmulator();
    try {
      const port = Number(new URL(first.endpoint).port);
      await assert.rejects(startEmulator({ port }), (e) => {
        assert.match(e.message, /exited with code 1 before it listened/);
        assert.match(e.message, /emulator stderr/);
        assert.match(e.message, /in use|address/i);
        return true;
      });
    } finally {
      await first.stop();
    }
  });

  test("a binary that does not exist (option and environment variable)", async () => {
    await assert.rejects(startEmulator({ binary: "/no/such/cosmos-emulator" }), /`binary` option names \/no\/such\/cosmos-emulator, which does not exist/);
    process.env.COSMOS_EMULATOR_BINARY = "/no/such/binary";
    try {
      await assert.rejects(startEmulator(), /COSMOS_EMULATOR_BINARY names \/no\/such\/binary/);
    } finally {
      delete process.env.COSMOS_EMULATOR_BINARY;
    }
  });

  test("a file that is not executable", { skip: posixOnly("it has no executable bit") }, async () => {
    await assert.rejects(startEmulator({ binary: join(PROJECT, "package.json") }), /cannot run the binary: .*EACCES/);
  });

  test("options are checked before anything starts", async () => {
    await assert.rejects(startEmulator({ clock: "fast" }), TypeError);
    await assert.rejects(startEmulator({ tsl: true }), /unknown option "tsl"/);
  });

  test("this process's PORT, PROTOCOL, DATA_PATH... do not reach the emulator; options.env does", async () => {
    const saved = { ...process.env };
    const leaking = {
      PORT: "1",
      PROTOCOL: "https",
      DATA_PATH: "/proc/no-such-dir",
      LOG_LEVEL: "nonsense",
      COSMOS_EMULATOR_PROTOCOL: "https",
      COSMOS_EMULATOR_DEFAULT_DATA_DIR: "/proc/no-such-dir",
    };
    Object.assign(process.env, leaking);
    try {
      const emu = await startEmulator();
      try {
        assert.match(emu.endpoint, /^http:\/\/localhost:\d+\/$/);
        assert.notEqual(new URL(emu.endpoint).port, "1");
      } finally {
        await emu.stop();
      }
      await assert.rejects(startEmulator({ env: { LOG_LEVEL: "nonsense" } }), /exited with code 2[^]*LOG_LEVEL/);
    } finally {
      for (const name of Object.keys(leaking)) {
        if (name in saved) process.env[name] = saved[name];
        else delete process.env[name];
      }
    }
  });

  test("COSMOS_EMULATOR_BINARY picks the binary", async () => {
    process.env.COSMOS_EMULATOR_BINARY = binaryPath();
    try {
      const emu = await startEmulator();
      await emu.stop();
    } finally {
      delete process.env.COSMOS_EMULATOR_BINARY;
    }
  });

  test("without the platform package: an error naming it and the fix", async () => {
    // The main package alone, as after npm install --omit=optional.
    const dir = mkdtempSync(join(tmpdir(), "cosmos-emulator-alone-"));
    try {
      mkdirSync(join(dir, "node_modules"));
      cpSync(join(PROJECT, "node_modules", "cosmos-emulator"), join(dir, "node_modules", "cosmos-emulator"), {
        recursive: true,
      });
      const script =
        "require('cosmos-emulator').startEmulator().then(" +
        "() => { console.log('started'); process.exit(3); }, (e) => { console.log(e.message); })";
      const env = { ...process.env };
      delete env.COSMOS_EMULATOR_BINARY;
      const { code, stdout } = await run(process.execPath, ["-e", script], { cwd: dir, env });
      assert.equal(code, 0, stdout);
      // This machine's package: cosmos-emulator-linux-x64 here (glibc).
      const name = platformPackage();
      const where = `${process.platform}-${process.arch}${process.platform === "linux" ? ` (${name.endsWith("-musl") ? "musl" : "glibc"})` : ""}`;
      assert.ok(stdout.includes(`the package ${name}, which carries the emulator binary for ${where}, is not installed`), stdout);
      assert.match(stdout, /--omit=optional/);
      assert.ok(stdout.includes(`npm install ${name}@${version}`), stdout);
      // And the bin says the same, with exit code 1.
      const bin = await run(process.execPath, [join(dir, "node_modules", "cosmos-emulator", "bin", "cosmos-emulator.js"), "--version"], { cwd: dir, env });
      assert.equal(bin.code, 1);
      assert.ok(bin.stderr.includes(name), bin.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the cosmos-emulator bin", () => {
  test("--version prints the package's version", async () => {
    const { code, stdout } = await runLauncher(["--version"]);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), `cosmos-emulator ${version}`);
  });

  test("the binary's exit code and stderr pass through", async () => {
    const { code, stderr } = await runLauncher(["--no-such-flag"]);
    assert.equal(code, 2);
    assert.match(stderr, /unexpected argument '--no-such-flag'/);
  });

  test("SIGTERM to the bin stops the emulator, which exits 0", { skip: posixOnly("no signals to pass on") }, async () => {
    const child = spawn(LAUNCHER, ["--port", "0", "--clock", "manual"], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
    assert.match(await firstLine(child), /^listening on http:\/\/localhost:\d+$/);
    child.kill("SIGTERM");
    assert.deepEqual(await exited, { code: 0, signal: null });
  });

  test("the emulator killed by a signal: the bin dies of the same signal", { skip: posixOnly("no signals; no pgrep") }, async () => {
    const child = spawn(LAUNCHER, ["--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
    await firstLine(child);
    const { stdout } = await run("pgrep", ["-P", String(child.pid)]);
    const emulator = Number(stdout.trim());
    assert.ok(emulator > 0, `pgrep -P ${child.pid}: ${stdout}`);
    process.kill(emulator, "SIGKILL");
    assert.deepEqual(await exited, { code: null, signal: "SIGKILL" });
    await waitFor("the emulator to be gone", () => isGone(emulator));
  });
});

describe("stop() and the data directory", () => {
  test("stop() is idempotent; afterwards a control call says the emulator exited", async () => {
    const emu = await startEmulator();
    const first = emu.stop();
    assert.equal(emu.stop(), first);
    await first;
    await emu.stop();
    assert.equal(emu.exited, true);
    assert.ok(isGone(emu.pid));
    // SIGTERM, a clean stop; on Windows kill() terminates it.
    const how = WINDOWS ? "was killed by SIGTERM" : "exited with code 0";
    await assert.rejects(emu.now(), new RegExp(`GET /_emulator/clock: the emulator ${how}`));
  });

  test("Symbol.asyncDispose stops it", async () => {
    const emu = await startEmulator();
    await emu[Symbol.asyncDispose]();
    assert.equal(emu.exited, true);
  });

  test("dataDir keeps databases and the clock across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cosmos-emulator-data-"));
    try {
      const first = await startEmulator({ dataDir: dir, clockStart: 1_700_000_000 });
      const { CosmosClient } = await import("@azure/cosmos");
      let client = new CosmosClient(first.clientOptions());
      await client.databases.create({ id: "kept" });
      await first.advance(42);
      client.dispose();
      await first.stop();

      // The manual clock resumes where it was, never earlier than clockStart.
      const second = await startEmulator({ dataDir: dir, clockStart: 1_700_000_000 });
      try {
        client = new CosmosClient(second.clientOptions());
        const { resources } = await client.databases.readAll().fetchAll();
        assert.deepEqual(resources.map((d) => d.id), ["kept"]);
        assert.equal(await second.now(), 1_700_000_042);
        client.dispose();
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
