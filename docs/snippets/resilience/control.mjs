// The control API through the npm package's client (npm install
// cosmos-emulator), for the emulator start.sh started; shared by the recipes.
import { Control, WELL_KNOWN_KEY } from "cosmos-emulator";

export const KEY = WELL_KNOWN_KEY;
export const ENDPOINT = "http://localhost:8081";
// control.reset(), control.addFault(...), control.takeDown(...)
export const control = new Control(ENDPOINT, { key: KEY });
