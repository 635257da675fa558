// vitest globalSetup: one emulator for the whole run, in vitest's main
// process; test files read its address with inject("cosmos").
import { startEmulator } from "cosmos-emulator";

export default async function setup({ provide }) {
  const emu = await startEmulator();
  provide("cosmos", { endpoint: emu.endpoint, key: emu.key });
  return () => emu.stop();
}
