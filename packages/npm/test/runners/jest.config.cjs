module.exports = {
  rootDir: __dirname,
  testMatch: ["<rootDir>/emulator.jest.cjs"],
  testEnvironment: "node",
  transform: {},
  testTimeout: 60000,
};
