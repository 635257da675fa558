#!/usr/bin/env node
"use strict";
// `cosmos-emulator` on PATH (npx cosmos-emulator, npm scripts): runs the
// platform package's binary with the same arguments and stdio, passes
// signals on and exits as it did (same code, or the same signal).

const { spawn } = require("node:child_process");
const { binaryPath } = require("../index.js");

let binary;
try {
  binary = binaryPath();
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}

// The handlers come first: a signal that arrives while the binary starts
// is passed on once it runs, never left to kill this launcher alone (the
// emulator would outlive it).
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2"];
const handlers = new Map();
let child;
let pending;
for (const signal of forwarded) {
  const handler = () => {
    if (!child) {
      pending = signal;
      return;
    }
    try {
      child.kill(signal);
    } catch {
      // Already exited.
    }
  };
  try {
    process.on(signal, handler);
    handlers.set(signal, handler);
  } catch {
    // Not a signal on this platform.
  }
}

child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: false });
if (pending) child.kill(pending);

child.on("error", (e) => {
  process.stderr.write(`cosmos-emulator: cannot run ${binary}: ${e.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  for (const [s, h] of handlers) process.off(s, h);
  if (signal) {
    // Die of the same signal, so that the caller sees what the emulator saw.
    process.kill(process.pid, signal);
    // In case the signal did not end this process (e.g. ignored).
    setTimeout(() => process.exit(128 + (require("node:os").constants.signals[signal] || 0)), 100).unref();
  } else {
    process.exit(code === null ? 1 : code);
  }
});
