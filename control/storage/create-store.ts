import type { Logger } from "../../shared/log/logger.ts";
import { createAzureStore } from "./azure-store.ts";
import type { StorageConfig } from "./config.ts";
import { createLocalStore } from "./local-store.ts";
import type { RecordingStore } from "./recording-store.ts";
import { createS3Store } from "./s3-store.ts";

/** Builds the store selected by STORAGE_BACKEND. Does no I/O; call `check()` to probe it. */
export function createRecordingStore(
  config: StorageConfig,
  deps: { recordingsDir: string; logger: Logger },
): RecordingStore {
  switch (config.backend) {
    case "local":
      return createLocalStore(deps);
    case "azure":
      return createAzureStore(config, deps);
    case "s3":
      return createS3Store(config, deps);
  }
}
