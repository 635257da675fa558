// Type declarations of cosmos-emulator for ES modules (index.mjs): the
// CommonJS declarations, re-exported.
export * from "./index.js";
declare const cjs: typeof import("./index.js");
export default cjs;
