module.exports = {
  rootDir: __dirname,
  testMatch: ["<rootDir>/*.jest.cjs"],
  globalSetup: "<rootDir>/jest.global-setup.cjs",
  globalTeardown: "<rootDir>/jest.global-teardown.cjs",
  testEnvironment: "node",
  transform: {},
  testTimeout: 60000,
};
