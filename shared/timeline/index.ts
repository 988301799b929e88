export * from "./records.ts";
export * from "./journal.ts";
export * from "./build.ts";
export * from "./file-name.ts";
