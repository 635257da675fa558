export default {
  test: {
    include: ["runners/*.vitest.mjs"],
    globalSetup: ["runners/vitest.global-setup.mjs"],
    testTimeout: 60000,
    hookTimeout: 60000,
  },
};
