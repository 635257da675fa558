/// <reference lib="esnext.disposable" />
// Type declarations of cosmos-emulator (CommonJS; index.d.mts re-exports
// them for ES modules).

import type { Agent } from "node:https";

/** The emulator's default master key (the well-known key of Microsoft's emulator). */
export declare const WELL_KNOWN_KEY: string;

/** This package's version (the emulator's). */
export declare const version: string;

export interface StartOptions {
  /**
   * "manual" (the default): time stands still until `advance()` or
   * `setClock()` moves it. "system": the machine's clock.
   */
  clock?: "manual" | "system";
  /** With the manual clock, its start in epoch seconds (default: now). */
  clockStart?: number;
  /**
   * Serve HTTPS with a certificate made at start; `certificate` is then the
   * path of its PEM file and `certificatePem` its text. Default false.
   */
  tls?: boolean;
  /** Keep the data in this directory (created if needed); default: in memory only. */
  dataDir?: string;
  /** At least this many partition key ranges per new container (1..1000; default 1). */
  ranges?: number;
  /** The base64 master key clients sign with; default WELL_KNOWN_KEY. */
  key?: string;
  /** Address to listen on; default "localhost" (both 127.0.0.1 and ::1, one port). */
  host?: string;
  /** Port to listen on; default 0, a free port. */
  port?: number;
  /**
   * The emulator binary to run; default: the COSMOS_EMULATOR_BINARY
   * environment variable, else the one in cosmos-emulator-<platform>-<arch>.
   */
  binary?: string;
  /** More command-line flags for the binary (see `npx cosmos-emulator --help`). */
  args?: string[];
  /**
   * Environment variables for the emulator on top of this process's
   * (the container-convention variables PORT, PROTOCOL, KEY_FILE, DATA_PATH,
   * LOG_LEVEL, ENABLE_EXPLORER, ENABLE_TELEMETRY, AZURE_COSMOS_EMULATOR_* and
   * COSMOS_EMULATOR_* are not inherited; set them here to use them). RUST_LOG
   * sets the log level.
   */
  env?: Record<string, string>;
  /** How long starting may take before the promise rejects, in ms; default 30000. */
  timeoutMs?: number;
  /**
   * Pass `--parent-pid <this process>` so that the emulator stops when this
   * process ends, also on a signal or a crash. Default true; false only for
   * a binary older than the flag.
   */
  dieWithParent?: boolean;
}

/** One snapshot as the control API describes it. */
export interface SnapshotInfo {
  name: string;
  databases: number;
  containers: number;
  items: number;
  /** The emulator's clock when the snapshot was taken or restored, in epoch seconds. */
  now: number;
}

/** What `reset()` answers. */
export interface ResetResult {
  /** How many databases were dropped. */
  databases: number;
  /** The clock after the reset, in epoch seconds. */
  now: number;
}

/** Options for `new CosmosClient(...)` of @azure/cosmos. */
export interface ClientOptions {
  endpoint: string;
  key: string;
  /** With TLS: an https.Agent that trusts the emulator's certificate. */
  agent?: Agent;
  [option: string]: unknown;
}

/** A control call the emulator refused (4xx), or one that could not reach it. */
export declare class EmulatorError extends Error {
  /** The HTTP status (400, 404, ...); undefined when there was no answer. */
  status?: number;
  /** The emulator's error code, e.g. "BadRequest" or "NotFound". */
  code?: string;
  /** The answer's body (parsed JSON when it was JSON). */
  body?: unknown;
}

/** A fault rule as the emulator stores it (see the guide's "Fault rules"). */
export interface FaultRule {
  id: string;
  hitCount: number;
  [field: string]: unknown;
}

/** One region as `GET /_emulator/regions` lists it. */
export interface RegionInfo {
  name: string;
  endpoint: string;
  writes: boolean;
  /** The outage's mode while down ("refuse", "reset", "hang", "503", "403-1008"), else null. */
  down: string | null;
  lagMs: number;
  paused: boolean;
}

/**
 * The emulator's control API (`/_emulator/...`), one method per route
 * (the guide's "The control API" page). `new Control(endpoint)` drives an
 * emulator started elsewhere (a container, a binary started by hand);
 * `Emulator` is a Control of the process it started. A refused call
 * rejects with an EmulatorError carrying the status and the emulator's
 * `{code, message}`.
 */
export declare class Control {
  /**
   * `endpoint`: e.g. "http://localhost:8081/"; `key` defaults to
   * WELL_KNOWN_KEY; with TLS, `certificatePem` is the certificate to trust.
   */
  constructor(endpoint: string, options?: { key?: string; certificatePem?: string });
  /** The endpoint with a trailing slash, e.g. "http://localhost:41233/". */
  readonly endpoint: string;
  /** The master key. */
  readonly key: string;
  /** With TLS, the PEM certificate's text (for https.Agent({ ca })); undefined otherwise. */
  readonly certificatePem: string | undefined;
  /**
   * Moves the manual clock forward by seconds, a fraction to the millisecond
   * included (`1.5`); resolves the new time in whole epoch seconds (`_ts`
   * stays whole, as the service's).
   */
  advance(seconds: number): Promise<number>;
  /** The manual clock's time in epoch seconds. */
  now(): Promise<number>;
  /** Sets the manual clock (earlier or later); resolves it. */
  setClock(epochSeconds: number): Promise<number>;
  /** The clock and the items stored per container, expired ones not yet purged included. */
  stats(): Promise<{
    now: number;
    clock: "manual" | "system";
    containers: { database: string; container: string; storedItems: number }[];
  }>;
  /** A page of a container's stored items with their lifetimes explained; pass `continuation` back for the next. */
  lifetimes(
    database: string,
    container: string,
    options?: { continuation?: string; maxItems?: number; order?: "key" | "expiry" },
  ): Promise<{ items: Record<string, unknown>[]; continuation: string | null; [field: string]: unknown }>;
  /** Resolves once every item due now is purged; the number purged. */
  purge(): Promise<number>;
  /** Splits a partition key range in two; resolves the children as pkranges lists them. */
  split(database: string, container: string, range: string): Promise<Record<string, unknown>[]>;
  /** Writes a snapshot of the data directory now (--data-dir only). */
  compact(): Promise<{ generation: number; snapshotBytes: number; logBytesBefore: number; millis: number; lockedMillis: number }>;
  /**
   * Drops every database (containers, items, change feeds, offers, users),
   * every fault rule and every region's condition; snapshots are kept. The
   * clock stays unless `clock` (manual clock only) is given.
   */
  reset(options?: { clock?: number }): Promise<ResetResult>;
  /** Saves the whole account in memory under `name` (1-128 of A-Z a-z 0-9 . _ -). */
  snapshot(name: string): Promise<SnapshotInfo>;
  /** Makes the account exactly the snapshot (the manual clock included); rejects with 404 if none. */
  restore(name: string): Promise<SnapshotInfo>;
  /** The saved snapshots. */
  snapshots(): Promise<SnapshotInfo[]>;
  /** Deletes a snapshot; rejects with 404 if none. */
  deleteSnapshot(name: string): Promise<void>;
  /** Adds a fault rule (`{match, respond, when, hits, ...}`); resolves it as stored. */
  addFault(rule: Record<string, unknown>): Promise<FaultRule>;
  /** Every fault rule in creation order, with its hitCount. */
  faults(): Promise<FaultRule[]>;
  /** The fault rule `id`; rejects with 404 if none. */
  fault(id: string): Promise<FaultRule>;
  /** Removes the fault rule `id`; rejects with 404 if none. */
  deleteFault(id: string): Promise<void>;
  /** Removes every fault rule; resolves how many there were. */
  clearFaults(): Promise<number>;
  /** Every region of the account (--regions). */
  regions(): Promise<RegionInfo[]>;
  /** Takes a region down: `mode` "refuse" (the default), "reset", "hang", "503" or "403-1008", for `forMs` of the emulator's clock. */
  takeDown(region: string, options?: { mode?: string; forMs?: number }): Promise<RegionInfo[]>;
  /** Brings a region back. */
  bringUp(region: string): Promise<RegionInfo[]>;
  /** A region's replica applies writes `lagMs` later on the emulator's clock, or pauses and resumes. */
  setReplication(region: string, options: { lagMs?: number; paused?: boolean }): Promise<RegionInfo[]>;
  /** Makes `writeRegion` the region that takes writes. */
  failOver(writeRegion: string): Promise<RegionInfo[]>;
}

/** A running emulator, from `startEmulator()`; its control API is Control's. */
export declare class Emulator extends Control implements AsyncDisposable {
  private constructor();
  /** Whether it serves HTTPS. */
  readonly tls: boolean;
  /** With TLS, the path of the PEM certificate to trust; undefined otherwise. */
  readonly certificate: string | undefined;
  /** The emulator process's id. */
  readonly pid: number;
  /** "AccountEndpoint=...;AccountKey=...;" */
  readonly connectionString: string;
  /** The tail of what the emulator wrote on stderr (its log). */
  readonly stderr: string;
  /** Whether the process has exited. */
  readonly exited: boolean;
  /** With TLS, an https.Agent trusting exactly the emulator's certificate; undefined over HTTP. */
  readonly agent: Agent | undefined;
  /** `{ endpoint, key, agent? }` for `new CosmosClient(...)`, with `extra` merged in. */
  clientOptions<T extends object = {}>(extra?: T): ClientOptions & T;
  /**
   * SIGTERM, then SIGKILL after `timeoutMs` (default 10000); resolves once
   * the process has exited. Idempotent.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  /** The same as stop(), for `await using emu = await startEmulator()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts the emulator (by default on a free loopback port, manual clock,
 * HTTP) and resolves once it answers a signed request. Rejects with an Error
 * saying why it could not start, with the emulator's stderr tail.
 */
export declare function startEmulator(options?: StartOptions): Promise<Emulator>;

/**
 * The emulator binary that `startEmulator` runs: `options.binary`, else
 * COSMOS_EMULATOR_BINARY, else the platform package's. Throws when missing.
 */
export declare function binaryPath(options?: { binary?: string }): string;

/**
 * The platform package's name, e.g. "cosmos-emulator-linux-x64", or
 * "cosmos-emulator-linux-x64-musl" when `libc` is "musl". Each argument
 * defaults to this machine's (`process.platform`, `process.arch`, and on
 * Linux the libc Node runs on: "musl" when its `process.report` has no
 * `header.glibcVersionRuntime`, as npm decides for the `libc` field).
 */
export declare function platformPackage(platform?: string, arch?: string, libc?: "glibc" | "musl" | null): string;

/** Master-key authorization headers for a request (resource type and link default to ""). */
export declare function masterKeyHeaders(
  key: string,
  verb: string,
  resourceType?: string,
  resourceLink?: string,
): Record<string, string>;
