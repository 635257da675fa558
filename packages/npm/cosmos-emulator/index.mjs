// The ES module face of cosmos-emulator: the CommonJS module, re-exported.
import cjs from "./index.js";

export const {
  startEmulator,
  binaryPath,
  platformPackage,
  masterKeyHeaders,
  Control,
  EmulatorError,
  Emulator,
  WELL_KNOWN_KEY,
  version,
} = cjs;
export default cjs;
