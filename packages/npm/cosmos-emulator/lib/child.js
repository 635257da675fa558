"use strict";
// The emulator process: its output, its exit, and its end with this process.

const fs = require("node:fs");

const STDERR_TAIL = 8000;

/** "exit code N" / "signal S" for an exited child. */
function howExited(code, signal) {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

function removeDir(dir) {
  if (!dir) return;
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // A temporary directory left behind is not worth an error.
  }
}

/**
 * The emulators of this module that still run. When this process exits
 * without stop() (the loop ran empty, process.exit(), an uncaught
 * exception), each is sent SIGTERM; the emulator's --parent-pid covers the
 * ways of dying that run no JavaScript (signals, SIGKILL, a crash). One
 * `exit` listener while any runs, none otherwise (jest loads this module
 * once per test file in the same process).
 */
const running = new Set();

function onParentExit() {
  for (const child of running) {
    try {
      child.proc.kill("SIGTERM");
    } catch {
      // Already gone.
    }
  }
}

function remember(child) {
  if (running.size === 0) process.on("exit", onParentExit);
  running.add(child);
}

function forget(child) {
  if (running.delete(child) && running.size === 0) process.off("exit", onParentExit);
}

/** The child process: its output tails, its exit, and its end with the parent. */
class Child {
  constructor(proc, tmp) {
    this.proc = proc;
    this.tmp = tmp;
    this.stderr = "";
    this.stdout = "";
    this.exit = undefined; // {code, signal} once exited
    this.spawnError = undefined;
    this.exited = new Promise((resolve) => {
      proc.once("exit", (code, signal) => {
        this.exit = { code, signal };
        forget(this);
        resolve(this.exit);
      });
      proc.once("error", (e) => {
        // Spawning failed (ENOENT, EACCES): no exit event follows.
        this.spawnError = e;
        if (proc.pid === undefined) {
          this.exit = { code: null, signal: null };
          forget(this);
          resolve(this.exit);
        }
      });
    });
    // Drain both pipes for the whole life of the process (a full pipe would
    // block the emulator); keep the tails for error messages.
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (d) => {
      this.stderr = (this.stderr + d).slice(-STDERR_TAIL);
    });
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (d) => {
      this.stdout = (this.stdout + d).slice(-STDERR_TAIL);
    });
    proc.stdin.on("error", () => {});
    remember(this);
  }

  /** Resolves the URL of the first stdout line `listening on <url>`. */
  listening(deadline, timeoutMs, shown) {
    return new Promise((resolve, reject) => {
      let settled = false;
      const done = (err, url) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.proc.stdout.off("data", onData);
        if (err) reject(err);
        else resolve(url);
      };
      const timer = setTimeout(
        () => done(this.failure(`no 'listening on' line within ${timeoutMs} ms`, shown)),
        Math.max(0, deadline - Date.now()),
      );
      const onData = () => {
        const nl = this.stdout.indexOf("\n");
        if (nl < 0) return;
        const line = this.stdout.slice(0, nl).trim();
        const m = /^listening on (\S+)$/.exec(line);
        if (m) done(undefined, m[1]);
        else done(this.failure(`unexpected first line on stdout: ${JSON.stringify(line)}`, shown));
      };
      this.proc.stdout.on("data", onData);
      this.exited.then(() => {
        // Let the last output arrive before reading it.
        setImmediate(() => done(this.failure(this.exitReason("before it listened"), shown)));
      });
    });
  }

  exitReason(when) {
    if (this.spawnError && this.proc.pid === undefined) {
      const e = this.spawnError;
      const hint = e.code === "EACCES" ? " (is the file executable?)" : "";
      return `cannot run the binary: ${e.message}${hint}`;
    }
    return `the emulator ${howExited(this.exit.code, this.exit.signal)} ${when}`;
  }

  /** An Error saying why, the command line and the stderr tail. */
  failure(why, shown) {
    const tail = this.stderr.trim();
    return new Error(
      `cosmos-emulator did not start: ${why}\ncommand: ${shown}` +
        (tail ? `\n--- emulator stderr (last lines) ---\n${tail}` : "\n(the emulator wrote nothing on stderr)"),
    );
  }

  /** Ready: the child no longer keeps the event loop alive. */
  detach() {
    this.proc.unref();
    for (const s of [this.proc.stdin, this.proc.stdout, this.proc.stderr]) s?.unref?.();
  }

  /** Sends `signal` unless exited; resolves on exit. */
  async kill(signal) {
    if (this.exit) return this.exit;
    try {
      this.proc.kill(signal);
    } catch {
      // Exited meanwhile.
    }
    return this.exited;
  }

  cleanup() {
    forget(this);
    for (const s of [this.proc.stdin, this.proc.stdout, this.proc.stderr]) s?.destroy();
    removeDir(this.tmp);
  }
}

module.exports = { Child, howExited, removeDir };
