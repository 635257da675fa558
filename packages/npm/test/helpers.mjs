// Shared by the *.test.mjs files: nothing here starts the emulator; the
// tests do, through the installed cosmos-emulator package.

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT = dirname(fileURLToPath(import.meta.url));

// These tests check HTTPS with verification on; refuse to run with it off.
if (process.env.NODE_TLS_REJECT_UNAUTHORIZED === "0") {
  throw new Error("NODE_TLS_REJECT_UNAUTHORIZED=0 turns certificate verification off; unset it");
}
// The suite runs the binary of the installed platform package.
delete process.env.COSMOS_EMULATOR_BINARY;

// Windows (the release workflow's Windows runner runs this suite too) has
// no POSIX signals: kill() terminates the process, which Node reports as
// killed by that signal; no process groups, no executable bit, and the
// emulator's --parent-pid does nothing there. Tests of those are skipped.
export const WINDOWS = process.platform === "win32";

/** node:test's `skip` option: on Windows, why the test does not apply. */
export function posixOnly(why) {
  return WINDOWS ? `not on Windows: ${why}` : false;
}

export function unique(prefix) {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

/** Whether `pid` is gone: no such process, or (Linux) a zombie nobody reaped yet. */
export function isGone(pid) {
  if (process.platform !== "linux") {
    // Signal 0 only asks whether the process exists (EPERM: it does).
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return e.code !== "EPERM";
    }
  }
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return true;
  }
  // pid (comm) STATE ...: comm may hold spaces and parentheses.
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state === "Z" || state === "X";
}

/** Polls `check` every 50 ms until it is true; throws after `timeoutMs`. */
export async function waitFor(what, check, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs `command args` in the project; resolves {code, signal, stdout,
 * stderr}. Rejects if it runs longer than `timeoutMs` (then it is killed).
 */
export function run(command, args, { timeoutMs = 180000, env, cwd = PROJECT, shell = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: env || process.env, shell, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")}: still running after ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Resolves the first line `child` prints on stdout. */
export function firstLine(child, timeoutMs = 60000) {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`no line within ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, nl));
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code ?? signal}) before printing a line; stdout: ${out}; stderr: ${err}`));
    });
  });
}
