import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { HeadBucketCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { Logger } from "../../shared/log/logger.ts";
import { metadataFor, objectKey } from "./recording-file-name.ts";
import type { RecordingStore, StoreInput, StoreResult } from "./recording-store.ts";
import { errorCode, errorMessage, isAbortError, localFileError, StorageError } from "./storage-error.ts";

// 8 MiB parts, 4 in flight: lib-storage buffers queueSize x partSize, so memory stays near
// 32 MiB for any file; 10,000 parts x 8 MiB = 80 GB, far above a four-hour WAV (~2.8 GB).
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 4;
// Per-request SDK retries stay few: uploadWithRetry owns the long wait for an outage.
const MAX_ATTEMPTS = 3;
const CHECK_TIMEOUT_MS = 5_000;

export interface S3StoreConfig {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
}

export function createS3Store(config: S3StoreConfig, deps: { logger: Logger }): RecordingStore {
  const logger = deps.logger.child({ storage: "s3", bucket: config.bucket });
  // Credentials come from the standard AWS chain (env AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY,
  // profile, web identity, container/instance role), so no secret passes through our config.
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    maxAttempts: MAX_ATTEMPTS,
    // S3-compatible servers (MinIO before 2024, Ceph, s3rver...) reject or mis-handle the CRC
    // checksum headers the SDK sends by default since 2025; with a custom endpoint only send
    // checksums where the API requires them. Against AWS itself the SDK default stays.
    ...(config.endpoint === undefined
      ? {}
      : { requestChecksumCalculation: "WHEN_REQUIRED" as const, responseChecksumValidation: "WHEN_REQUIRED" as const }),
  });
  const where = `${config.endpoint ?? `S3 (${config.region})`} bucket "${config.bucket}"`;

  async function store(input: StoreInput, signal?: AbortSignal): Promise<StoreResult> {
    const key = objectKey(input.sessionId, input.fileName);
    signal?.throwIfAborted();
    try {
      await stat(input.localPath);
    } catch (error) {
      throw localFileError(error, "s3", input.localPath) ?? classifyS3Error(error, "upload", where, signal);
    }
    const body = createReadStream(input.localPath);
    const abortController = new AbortController();
    const onAbort = (): void => abortController.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const upload = new Upload({
        client,
        params: {
          Bucket: config.bucket,
          Key: key,
          Body: body,
          ContentType: input.contentType,
          Metadata: metadataFor(input.sessionId, input.reference),
        },
        partSize: PART_SIZE,
        queueSize: QUEUE_SIZE,
        // A failed multipart upload is aborted so orphaned parts do not pile up (and cost money).
        leavePartsOnError: false,
        abortController,
      });
      await upload.done();
    } catch (error) {
      throw localFileError(error, "s3", input.localPath) ?? classifyS3Error(error, "upload", where, signal);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      body.destroy();
    }
    const location = `${config.bucket}/${key}`;
    logger.info({ session_id: input.sessionId, location }, "recording uploaded to S3");
    return { location, deleteLocal: true };
  }

  async function check(): Promise<void> {
    try {
      await client.send(new HeadBucketCommand({ Bucket: config.bucket }), {
        abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      });
    } catch (error) {
      throw classifyS3Error(error, "check", where, undefined);
    }
  }

  return { kind: "s3", store, check };
}

const AUTH_NAMES = new Set([
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "AccessDenied",
  "InvalidToken",
  "ExpiredToken",
  "CredentialsProviderError",
]);
const REGION_NAMES = new Set(["AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException"]);

/** Maps an AWS SDK error to a StorageError whose message a person can act on. */
export function classifyS3Error(
  error: unknown,
  operation: "upload" | "check",
  where: string,
  signal: AbortSignal | undefined,
): StorageError {
  const base = { backend: "s3" as const, cause: error };
  if (isAbortError(error, signal)) return new StorageError(`S3 ${operation} cancelled`, { ...base, code: "aborted" });
  const name = error instanceof Error ? error.name : undefined;
  const status = error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
  const detail = [name, status === undefined ? undefined : `HTTP ${status}`].filter(Boolean).join(", ");
  if (name === "CredentialsProviderError") {
    return new StorageError(
      `S3 ${operation} impossible: no AWS credentials found — set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile or role)`,
      { ...base, code: "auth" },
    );
  }
  if (name !== undefined && REGION_NAMES.has(name)) {
    return new StorageError(`S3 ${operation} refused at ${where} (${detail}) — check S3_REGION and S3_ENDPOINT`, {
      ...base,
      code: "auth",
    });
  }
  if ((name !== undefined && AUTH_NAMES.has(name)) || status === 401 || status === 403) {
    return new StorageError(
      `S3 ${operation} refused at ${where}: authentication failed (${detail}) — check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
      { ...base, code: "auth" },
    );
  }
  if (name === "NoSuchBucket" || (status === 404 && operation === "check") || name === "NotFound") {
    return new StorageError(`S3 ${where} does not exist (${detail}) — create it or fix S3_BUCKET`, {
      ...base,
      code: "not_found",
    });
  }
  if (status === undefined || status === 408 || status === 429 || status >= 500) {
    const reason = errorCode(error) ?? errorMessage(error);
    return new StorageError(`S3 at ${where} unreachable: ${reason}`, { ...base, code: "unreachable" });
  }
  return new StorageError(`S3 ${operation} failed at ${where} (${detail}): ${errorMessage(error)}`, {
    ...base,
    code: "unknown",
  });
}
