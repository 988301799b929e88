// Public surface of the storage module: where finished recordings go.
export {
  parseStorageConfig,
  STORAGE_BACKENDS,
  storageConfigSchema,
  storageEnvShape,
  type StorageBackend,
  type StorageConfig,
  type StorageConfigInput,
} from "./config.ts";
export { createRecordingStore } from "./create-store.ts";
export { metadataFor, objectKey, recordingFileName } from "./recording-file-name.ts";
export type { RecordingContentType, RecordingStore, StoreInput, StoreResult } from "./recording-store.ts";
export { StorageError, type StorageErrorCode } from "./storage-error.ts";
export { storeRecording, type StoredRecording } from "./store-recording.ts";
export { backoffDelay, uploadWithRetry, type RetryOptions } from "./upload-with-retry.ts";
