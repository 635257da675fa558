// Type-checked (tsc --noEmit), never run: the declarations as an ES module sees them.
import { CosmosClient } from "@azure/cosmos";
import {
  startEmulator,
  type Emulator,
  type SnapshotInfo,
  type FaultRule,
  type RegionInfo,
  Control,
  EmulatorError,
  WELL_KNOWN_KEY,
} from "cosmos-emulator";
import cosmosEmulator from "cosmos-emulator";

export async function check(): Promise<void> {
  const emu: Emulator = await startEmulator({ clock: "manual", tls: true, ranges: 4, timeoutMs: 5000, args: [] });
  const endpoint: string = emu.endpoint;
  const certificate: string | undefined = emu.certificate;
  const now: number = await emu.advance(10);
  const purged: number = await emu.purge();
  const { databases }: { databases: number } = await emu.reset({ clock: 1_700_000_000 });
  const info: SnapshotInfo = await emu.snapshot("seeded");
  const restored: SnapshotInfo = await emu.restore("seeded");
  const rule: FaultRule = await emu.addFault({ respond: { status: 503 } });
  const deleted: number = await emu.clearFaults();
  const control = new Control("http://localhost:8081/", { key: WELL_KNOWN_KEY });
  const regions: RegionInfo[] = await control.takeDown("eastus", { mode: "503", forMs: 1000 });
  const stored: number = (await control.stats()).containers[0].storedItems;
  const client = new CosmosClient(emu.clientOptions());
  const withAgent = new CosmosClient({ endpoint: emu.endpoint, key: emu.key, agent: emu.agent });
  await emu.stop();
  await emu[Symbol.asyncDispose]();
  {
    await using scoped = await cosmosEmulator.startEmulator();
    scoped.endpoint satisfies string;
  }
  // @ts-expect-error: the clock is "manual" or "system"
  await startEmulator({ clock: "fast" });
  // @ts-expect-error: not an option
  await startEmulator({ tsl: true });
  // @ts-expect-error: advance takes seconds as a number
  await emu.advance("10");
  // @ts-expect-error: a Control has no process to stop
  await control.stop();
  const e = new Error() as unknown;
  if (e instanceof EmulatorError) {
    const status: number | undefined = e.status;
    void status;
  }
  void [endpoint, certificate, now, purged, databases, info, restored, client, withAgent, WELL_KNOWN_KEY];
  void [rule, deleted, regions, stored];
}
