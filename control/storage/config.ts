import { z } from "zod";

/** Where finished recordings go (decisions.md, Storage bullet). */
export const STORAGE_BACKENDS = ["local", "azure", "s3"] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

// An environment variable set to "" (e.g. `S3_ENDPOINT=` in a compose file) means "not set".
const optionalText = z.preprocess(
  (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
  z.string().trim().optional(),
);

// Azure container names: 3-63 lowercase letters, digits and single hyphens (Azure naming rules);
// checked here so a typo fails at startup rather than at the first upload hours later.
const AZURE_CONTAINER_NAME = /^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$/;
// A connection string always names the account or an endpoint; anything else is a pasted key or URL.
const AZURE_CONNECTION_STRING = /(^|;)\s*(AccountName|BlobEndpoint|UseDevelopmentStorage)\s*=/i;

/** Raw env keys; exported so the config owner can list them or compose them into one schema. */
export const storageEnvShape = {
  STORAGE_BACKEND: z.preprocess(
    (value) => (typeof value === "string" && value.trim() !== "" ? value.trim().toLowerCase() : undefined),
    z
      .enum(STORAGE_BACKENDS, { error: "STORAGE_BACKEND must be one of local, azure, s3" })
      .default("local"),
  ),
  AZURE_STORAGE_CONNECTION_STRING: optionalText,
  AZURE_STORAGE_CONTAINER: optionalText,
  S3_BUCKET: optionalText,
  S3_REGION: optionalText,
  S3_ENDPOINT: optionalText.pipe(
    z
      .url({
        protocol: /^https?$/,
        error: "S3_ENDPOINT must be an http(s) URL such as https://s3.example.com:9000",
      })
      .optional(),
  ),
  S3_FORCE_PATH_STYLE: z.preprocess(
    (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
    z
      .stringbool({
        truthy: ["true", "1"],
        falsy: ["false", "0"],
        case: "insensitive",
        error: 'S3_FORCE_PATH_STYLE must be "true", "false", "1" or "0"',
      })
      .default(false),
  ),
};

const storageEnvObject = z.object(storageEnvShape);
type StorageEnv = z.output<typeof storageEnvObject>;

function requireKey(ctx: z.RefinementCtx, env: StorageEnv, key: keyof StorageEnv, hint: string): void {
  if (env[key] === undefined) {
    ctx.addIssue({
      code: "custom",
      path: [key],
      message: `${key} is required when STORAGE_BACKEND=${env.STORAGE_BACKEND}: ${hint}`,
    });
  }
}

/** The storage part of the configuration, one variant per backend, so consumers cannot read a key the backend does not use. */
export type StorageConfig =
  | { backend: "local" }
  | { backend: "azure"; connectionString: string; container: string }
  | { backend: "s3"; bucket: string; region: string; endpoint: string | undefined; forcePathStyle: boolean };

/**
 * Input: a plain `Record<string, string | undefined>` of environment variables (unknown keys are
 * ignored). Output: {@link StorageConfig}. Every issue names the exact env key in its message and path.
 */
export const storageConfigSchema = storageEnvObject
  .superRefine((env, ctx) => {
    if (env.STORAGE_BACKEND === "azure") {
      requireKey(ctx, env, "AZURE_STORAGE_CONNECTION_STRING", "copy it from the storage account's Access keys page");
      requireKey(ctx, env, "AZURE_STORAGE_CONTAINER", "set it to the container name");
      const connection = env.AZURE_STORAGE_CONNECTION_STRING;
      if (connection !== undefined && !AZURE_CONNECTION_STRING.test(connection)) {
        ctx.addIssue({
          code: "custom",
          path: ["AZURE_STORAGE_CONNECTION_STRING"],
          message:
            "AZURE_STORAGE_CONNECTION_STRING is not a connection string: expected DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...",
        });
      }
      const container = env.AZURE_STORAGE_CONTAINER;
      if (container !== undefined && !AZURE_CONTAINER_NAME.test(container)) {
        ctx.addIssue({
          code: "custom",
          path: ["AZURE_STORAGE_CONTAINER"],
          message: `AZURE_STORAGE_CONTAINER "${container}" is not a valid container name: use 3-63 lowercase letters, digits and hyphens`,
        });
      }
    }
    if (env.STORAGE_BACKEND === "s3") {
      requireKey(ctx, env, "S3_BUCKET", "set it to the bucket name");
    }
  })
  .transform((env): StorageConfig => {
    // superRefine has already reported every missing key, so the fallbacks below are never used.
    switch (env.STORAGE_BACKEND) {
      case "azure":
        return {
          backend: "azure",
          connectionString: env.AZURE_STORAGE_CONNECTION_STRING ?? "",
          container: env.AZURE_STORAGE_CONTAINER ?? "",
        };
      case "s3":
        return {
          backend: "s3",
          bucket: env.S3_BUCKET ?? "",
          // S3-compatible servers ignore the region; AWS answers a wrong one with a clear error.
          region: env.S3_REGION?.trim() || DEFAULT_S3_REGION,
          endpoint: env.S3_ENDPOINT,
          forcePathStyle: env.S3_FORCE_PATH_STYLE,
        };
      default:
        return { backend: "local" };
    }
  });

/** The region signed for when S3_REGION is unset (what the AWS CLI assumes too). */
export const DEFAULT_S3_REGION = "us-east-1";

export type StorageConfigInput = z.input<typeof storageConfigSchema>;

/** Parses the storage keys alone; throws one Error whose lines each name a key (for tools and tests). */
export function parseStorageConfig(env: Record<string, string | undefined>): StorageConfig {
  const result = storageConfigSchema.safeParse(env);
  if (result.success) return Object.freeze(result.data);
  throw new Error(result.error.issues.map((issue) => issue.message).join("\n"));
}
