// The README's node:test example, as shipped in the installed package, run
// as it is with node --test.

import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PROJECT, run } from "./helpers.mjs";

test("the README's node:test example passes", async () => {
  const readme = readFileSync(join(PROJECT, "node_modules", "cosmos-emulator", "README.md"), "utf8");
  // \r?: a README packed from a checkout with CRLF line endings (Windows).
  const block = /```js\r?\n(import \{ before, after, test \} from "node:test";[^]*?)```/.exec(readme);
  assert.ok(block, "the README has a node:test example");
  const file = join(PROJECT, "readme-example.generated.mjs");
  writeFileSync(file, block[1]);
  try {
    // A plain run: NODE_TEST_CONTEXT would make the inner runner report to this one.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const { code, stdout, stderr } = await run(process.execPath, ["--test", file], { env });
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /# pass 1/);
  } finally {
    rmSync(file, { force: true });
  }
});
