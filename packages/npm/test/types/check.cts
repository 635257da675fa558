// Type-checked (tsc --noEmit), never run: the declarations as CommonJS sees them.
import emulator = require("cosmos-emulator");

export async function check(): Promise<void> {
  const emu = await emulator.startEmulator({ tls: false, dataDir: "/tmp/data" });
  const pem: string | undefined = emu.certificatePem;
  const path: string = emulator.binaryPath();
  await emu.stop({ timeoutMs: 1000 });
  void [pem, path];
}
