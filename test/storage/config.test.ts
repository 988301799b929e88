// Storage configuration: every error names the env key to fix.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseStorageConfig, storageConfigSchema } from "../../control/storage/config.ts";
import { recordingFileName } from "../../control/storage/recording-file-name.ts";

function issues(env: Record<string, string | undefined>): [string, string][] {
  const result = storageConfigSchema.safeParse(env);
  assert.equal(result.success, false);
  return result.error?.issues.map((issue) => [issue.path.join("."), issue.message]) ?? [];
}

test("local is the default and ignores unrelated env keys", () => {
  assert.deepEqual(parseStorageConfig({ PATH: "/bin", S3_BUCKET: "unused" }), { backend: "local" });
  assert.deepEqual(parseStorageConfig({ STORAGE_BACKEND: "" }), { backend: "local" });
});

test("azure without its keys names each missing key and what to set", () => {
  assert.deepEqual(issues({ STORAGE_BACKEND: "azure" }).map(([path]) => path), [
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_STORAGE_CONTAINER",
  ]);
  assert.throws(
    () => parseStorageConfig({ STORAGE_BACKEND: "azure", AZURE_STORAGE_CONNECTION_STRING: "AccountName=a;AccountKey=b" }),
    { message: "AZURE_STORAGE_CONTAINER is required when STORAGE_BACKEND=azure: set it to the container name" },
  );
});

test("azure values are checked: connection string shape, container name", () => {
  const found = issues({ STORAGE_BACKEND: "azure", AZURE_STORAGE_CONNECTION_STRING: "https://x.blob.core.windows.net", AZURE_STORAGE_CONTAINER: "Bad_Name" });
  assert.deepEqual(found.map(([path]) => path), ["AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_CONTAINER"]);
  assert.match(found[1]?.[1] ?? "", /AZURE_STORAGE_CONTAINER "Bad_Name" is not a valid container name/);
});

test("azure config parses into its variant", () => {
  const connectionString = "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=b;EndpointSuffix=core.windows.net";
  assert.deepEqual(
    parseStorageConfig({ STORAGE_BACKEND: "Azure", AZURE_STORAGE_CONNECTION_STRING: connectionString, AZURE_STORAGE_CONTAINER: "recs" }),
    { backend: "azure", connectionString, container: "recs" },
  );
});

test("s3 without a bucket names the key; without a region it signs for us-east-1", () => {
  assert.deepEqual(issues({ STORAGE_BACKEND: "s3", S3_REGION: "  " }), [
    ["S3_BUCKET", "S3_BUCKET is required when STORAGE_BACKEND=s3: set it to the bucket name"],
  ]);
  const parsed = storageConfigSchema.parse({ STORAGE_BACKEND: "s3", S3_BUCKET: "b" });
  assert.equal(parsed.backend === "s3" && parsed.region, "us-east-1");
});

test("S3_FORCE_PATH_STYLE accepts true/false/1/0 and rejects anything else by name", () => {
  const base = { STORAGE_BACKEND: "s3", S3_BUCKET: "b", S3_REGION: "eu-west-1" };
  for (const [raw, expected] of [["true", true], ["1", true], ["FALSE", false], ["0", false], [undefined, false]] as const) {
    const config = parseStorageConfig({ ...base, S3_FORCE_PATH_STYLE: raw });
    assert.equal(config.backend === "s3" && config.forcePathStyle, expected, `S3_FORCE_PATH_STYLE=${raw}`);
  }
  assert.deepEqual(issues({ ...base, S3_FORCE_PATH_STYLE: "yes" }).map(([path]) => path), ["S3_FORCE_PATH_STYLE"]);
});

test("S3_ENDPOINT must be an http(s) URL", () => {
  const base = { STORAGE_BACKEND: "s3", S3_BUCKET: "b", S3_REGION: "us-east-1" };
  assert.deepEqual(issues({ ...base, S3_ENDPOINT: "ftp://files" }).map(([path]) => path), ["S3_ENDPOINT"]);
  assert.deepEqual(parseStorageConfig({ ...base, S3_ENDPOINT: "http://127.0.0.1:9000" }), {
    backend: "s3",
    bucket: "b",
    region: "us-east-1",
    endpoint: "http://127.0.0.1:9000",
    forcePathStyle: false,
  });
});

test("an unknown backend is named", () => {
  assert.throws(() => parseStorageConfig({ STORAGE_BACKEND: "gcs" }), { message: "STORAGE_BACKEND must be one of local, azure, s3" });
});

test("file names are <session_id>_<YYYYMMDD>_<HHMMSS>.<ext> in UTC and refuse unsafe ids", () => {
  const at = new Date("2024-02-29T00:01:02.999+02:00");
  assert.equal(recordingFileName("abc-123", at, "audio/flac"), "abc-123_20240228_220102.flac");
  assert.equal(recordingFileName("abc", new Date(Date.UTC(2030, 0, 1, 1, 2, 3)), "audio/wav"), "abc_20300101_010203.wav");
  assert.throws(() => recordingFileName("../etc", at, "audio/wav"), /cannot be used in a file name/);
});
