export * from "./records.ts";
export * from "./journal.ts";
export * from "./summary.ts";
export { fsyncDir, writeFileDurably, TEMP_PREFIX } from "./durable-fs.ts";
