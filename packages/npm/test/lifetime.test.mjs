// The emulator never outlives the Node process that started it: a normal
// end without stop(), stop(), an uncaught exception, SIGTERM and SIGKILL
// of that process. The last two need the binary's --parent-pid.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PROJECT, firstLine, isGone, posixOnly, waitFor } from "./helpers.mjs";

const CHILD = join(PROJECT, "fixtures", "child.mjs");
// The README: "On Windows, stop it yourself".
const NO_PARENT_PID = "--parent-pid does nothing there, so a killed Node's emulator is not promised to stop";

/** Starts fixtures/child.mjs in `mode`; resolves the emulator's pid and the child. */
async function startChild(mode, { detached = false } = {}) {
  const child = spawn(process.execPath, [CHILD, mode], { cwd: PROJECT, detached, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const { pid, endpoint } = JSON.parse(await firstLine(child));
  assert.ok(Number.isInteger(pid));
  assert.match(endpoint, /^http:/);
  return { child, exited, pid, stderr: () => stderr, stdout: child.stdout };
}

describe("the emulator ends with the Node process that started it", () => {
  test("the process ends normally without stop(): Node exits, the emulator goes", async () => {
    const { exited, pid } = await startChild("return");
    // It exits by itself: an un-stopped emulator does not keep Node alive.
    assert.deepEqual(await exited, { code: 0, signal: null });
    await waitFor(`emulator ${pid} to exit`, () => isGone(pid));
  });

  test("the process awaits stop() and then ends by itself", async () => {
    const { exited, pid } = await startChild("stop");
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.ok(isGone(pid), "stop() resolved before the emulator exited");
  });

  test("an uncaught exception ends the process, and the emulator", async () => {
    const { exited, pid, stderr } = await startChild("throw");
    assert.equal((await exited).code, 1);
    assert.match(stderr(), /a test crashed/);
    await waitFor(`emulator ${pid} to exit`, () => isGone(pid));
  });

  test("Ctrl-C (SIGINT to the process group): the emulator still serves the teardown", { skip: posixOnly("no process groups") }, async () => {
    // The child leads its own process group, as a test runner in a terminal.
    const { child, exited, pid, stderr } = await startChild("sigint", { detached: true });
    assert.ok(!isGone(pid), "the emulator runs while its parent does");
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    process.kill(-child.pid, "SIGINT");
    assert.deepEqual(await exited, { code: 0, signal: null }, stderr());
    assert.match(out, /teardown saw the clock at \d+/);
    await waitFor(`emulator ${pid} to exit`, () => isGone(pid));
  });

  test("SIGTERM to the process (no handler): the emulator goes", { skip: posixOnly(NO_PARENT_PID) }, async () => {
    const { child, exited, pid } = await startChild("wait");
    assert.ok(!isGone(pid), "the emulator runs while its parent does");
    child.kill("SIGTERM");
    assert.equal((await exited).signal, "SIGTERM");
    await waitFor(`emulator ${pid} to exit after its parent's SIGTERM`, () => isGone(pid));
  });

  test("SIGKILL to the process: the emulator goes", { skip: posixOnly(NO_PARENT_PID) }, async () => {
    const { child, exited, pid } = await startChild("wait");
    assert.ok(!isGone(pid), "the emulator runs while its parent does");
    child.kill("SIGKILL");
    assert.equal((await exited).signal, "SIGKILL");
    await waitFor(`emulator ${pid} to exit after its parent's SIGKILL`, () => isGone(pid));
  });
});
