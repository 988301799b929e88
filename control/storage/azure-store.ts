import { BlobServiceClient, RestError, type StoragePipelineOptions } from "@azure/storage-blob";
import type { Logger } from "../../shared/log/logger.ts";
import { metadataFor, objectKey } from "./recording-file-name.ts";
import type { RecordingStore, StoreInput, StoreResult } from "./recording-store.ts";
import { errorCode, errorMessage, isAbortError, localFileError, StorageError } from "./storage-error.ts";

// 8 MiB blocks, 4 in flight: memory stays near 32 MiB whatever the file size (a four-hour WAV is
// ~2.8 GB), and a failed block is re-sent alone. 50,000 blocks x 8 MiB = 400 GB, far above any recording.
const BLOCK_SIZE = 8 * 1024 * 1024;
const CONCURRENCY = 4;
// Above this size uploadFile switches from one PUT to parallel blocks; the SDK default (256 MiB)
// would send most recordings as one request that restarts from zero on any hiccup.
const MAX_SINGLE_SHOT = BLOCK_SIZE;

// The SDK's own retry (per request/block) is kept short: uploadWithRetry owns the long wait for an
// outage, and the SDK default (4 tries from 4 s) would hide each attempt for ~30 s.
const UPLOAD_PIPELINE: StoragePipelineOptions = {
  retryOptions: { maxTries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 4_000 },
};
// /readyz must answer quickly: one try, bounded.
const CHECK_PIPELINE: StoragePipelineOptions = { retryOptions: { maxTries: 1, tryTimeoutInMs: 5_000 } };

export function createAzureStore(
  config: { connectionString: string; container: string },
  deps: { logger: Logger },
): RecordingStore {
  const logger = deps.logger.child({ storage: "azure", container: config.container });
  const uploads = clientFor(config.connectionString, UPLOAD_PIPELINE).getContainerClient(config.container);
  const checks = clientFor(config.connectionString, CHECK_PIPELINE).getContainerClient(config.container);
  // Without the query: a SAS connection string puts its signature there, and this reaches messages.
  const describe = { container: config.container, url: uploads.url.split("?")[0] ?? "" };

  async function store(input: StoreInput, signal?: AbortSignal): Promise<StoreResult> {
    const key = objectKey(input.sessionId, input.fileName);
    try {
      await uploads.getBlockBlobClient(key).uploadFile(input.localPath, {
        blockSize: BLOCK_SIZE,
        concurrency: CONCURRENCY,
        maxSingleShotSize: MAX_SINGLE_SHOT,
        blobHTTPHeaders: { blobContentType: input.contentType },
        metadata: metadataFor(input.sessionId, input.reference),
        abortSignal: signal,
      });
    } catch (error) {
      throw localFileError(error, "azure", input.localPath) ?? classifyAzureError(error, "upload", describe, signal);
    }
    const location = `${config.container}/${key}`;
    logger.info({ session_id: input.sessionId, location }, "recording uploaded to Azure Blob storage");
    return { location, deleteLocal: true };
  }

  async function check(): Promise<void> {
    try {
      await checks.getProperties();
    } catch (error) {
      throw classifyAzureError(error, "check", describe, undefined);
    }
  }

  return { kind: "azure", store, check };
}

function clientFor(connectionString: string, options: StoragePipelineOptions): BlobServiceClient {
  try {
    return BlobServiceClient.fromConnectionString(connectionString, options);
  } catch (error) {
    // The SDK's message may quote the string (and its key); say only which setting is wrong.
    throw new StorageError("AZURE_STORAGE_CONNECTION_STRING cannot be parsed: copy it again from the storage account", {
      code: "auth",
      backend: "azure",
      cause: new Error(errorMessage(error).replace(/AccountKey=[^;]*/gi, "AccountKey=[redacted]")),
    });
  }
}

const AUTH_CODES = new Set([
  "AuthenticationFailed",
  "AuthorizationFailure",
  "AuthorizationPermissionMismatch",
  "AuthorizationResourceTypeMismatch",
  "InvalidAuthenticationInfo",
  "AccountIsDisabled",
]);

/** Maps an Azure SDK error to a StorageError whose message a person can act on. */
export function classifyAzureError(
  error: unknown,
  operation: "upload" | "check",
  where: { container: string; url: string },
  signal: AbortSignal | undefined,
): StorageError {
  const base = { backend: "azure" as const, cause: error };
  if (isAbortError(error, signal)) {
    return new StorageError(`Azure Blob ${operation} cancelled`, { ...base, code: "aborted" });
  }
  const status = error instanceof RestError ? error.statusCode : undefined;
  const code = errorCode(error);
  const detail = [code, status === undefined ? undefined : `HTTP ${status}`].filter(Boolean).join(", ");
  if (status === 401 || status === 403 || (code !== undefined && AUTH_CODES.has(code))) {
    return new StorageError(
      `Azure Blob ${operation} refused: authentication failed (${detail}) — check AZURE_STORAGE_CONNECTION_STRING`,
      { ...base, code: "auth" },
    );
  }
  if (code === "ContainerNotFound" || (status === 404 && code !== "BlobNotFound")) {
    return new StorageError(
      `Azure Blob container "${where.container}" does not exist at ${where.url} (${detail}) — create it or fix AZURE_STORAGE_CONTAINER`,
      { ...base, code: "not_found" },
    );
  }
  if (status === undefined || status === 408 || status === 429 || status >= 500) {
    return new StorageError(`Azure Blob storage at ${where.url} unreachable: ${errorMessage(error)}`, {
      ...base,
      code: "unreachable",
    });
  }
  return new StorageError(`Azure Blob ${operation} failed (${detail}): ${errorMessage(error)}`, { ...base, code: "unknown" });
}
