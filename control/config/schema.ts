/** The whole configuration: one strict schema, parsed once into a frozen object. */
import { z } from "zod";
import {
  forwardedHeadersSchema,
  hooksSchema,
  linksSchema,
  localLoginSchema,
  mailSchema,
  oidcSchema,
  passkeysSchema,
  trustedDevicesSchema,
  twoFactorSchema,
} from "./auth-schema.ts";
import { botSchema, serverSchema } from "./bot-schema.ts";
import { storageConfigSchema, storageEnvShape } from "../storage/config.ts";

const section = <T extends z.ZodType>(schema: T) => schema.prefault({} as z.input<T>);

export const configSchema = z
  .object({
    server: section(serverSchema),
    bot: section(botSchema),
    /** STORAGE_BACKEND and its backend's keys, one variant per backend (control/storage/config.ts). */
    storage: storageConfigSchema.prefault({}),
    LocalLogin: section(localLoginSchema),
    TrustedDevices: section(trustedDevicesSchema),
    TwoFactor: section(twoFactorSchema),
    Passkeys: section(passkeysSchema),
    Oidc: section(oidcSchema),
    Mail: section(mailSchema),
    Hooks: section(hooksSchema),
    Links: section(linksSchema),
    ForwardedHeaders: section(forwardedHeadersSchema),
  })
  .strict();

type Parsed = z.output<typeof configSchema>;
type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

export type Config = DeepReadonly<Parsed>;
export type ConfigInput = z.input<typeof configSchema>;

/** Plain environment variables (bot and server sections) the schema knows. */
export const PLAIN_KEYS = {
  server: serverKeys(),
  bot: Object.keys(botSchema.shape),
  storage: Object.keys(storageEnvShape),
} as const;

function serverKeys(): string[] {
  return ["PORT", "HOST", "DATABASE_URL", "LOG_LEVEL", "METRICS_TOKEN"];
}
