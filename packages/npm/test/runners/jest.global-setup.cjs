// jest globalSetup: one emulator for the whole run, in jest's main process
// (test files run in workers); its address reaches them through the environment.
const { startEmulator } = require("cosmos-emulator");

module.exports = async function globalSetup() {
  const emu = await startEmulator();
  globalThis.cosmosEmulator = emu;
  process.env.COSMOS_ENDPOINT = emu.endpoint;
  process.env.COSMOS_KEY = emu.key;
};
