module.exports = async function globalTeardown() {
  await globalThis.cosmosEmulator?.stop();
};
