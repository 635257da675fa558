export default { test: { include: ["runners/emulator.vitest.mjs"], testTimeout: 60000, hookTimeout: 60000 } };
