// The package from the tools JavaScript tests are written with: the
// TypeScript declarations type-check, and vitest and jest run a test that
// starts the emulator and exit by themselves afterwards (nothing left open).

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PROJECT, run } from "./helpers.mjs";

const bin = (...parts) => join(PROJECT, "node_modules", ...parts);

describe("tools", () => {
  test("TypeScript: the declarations type-check (tsc --noEmit, strict, ESM and CommonJS)", async () => {
    const { code, stdout, stderr } = await run(process.execPath, [bin("typescript", "bin", "tsc"), "-p", "types/tsconfig.json"]);
    assert.equal(code, 0, `tsc:\n${stdout}\n${stderr}`);
  });

  test("vitest run: a test file importing cosmos-emulator", async () => {
    const { code, stdout, stderr } = await run(process.execPath, [bin("vitest", "vitest.mjs"), "run", "--config", "runners/vitest.config.mjs"], {
      env: { ...process.env, CI: "true", NO_COLOR: "1" },
    });
    assert.equal(code, 0, `vitest:\n${stdout}\n${stderr}`);
    assert.match(stdout, /Tests\s+2 passed/);
  });

  test("jest: a test file requiring cosmos-emulator", async () => {
    const { code, stdout, stderr } = await run(process.execPath, [bin("jest", "bin", "jest.js"), "--config", "runners/jest.config.cjs", "--ci"], {
      env: { ...process.env, CI: "true", NO_COLOR: "1" },
    });
    assert.equal(code, 0, `jest:\n${stdout}\n${stderr}`);
    assert.match(stderr, /Tests:\s+2 passed/);
  });
});
