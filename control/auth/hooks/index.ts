/** Delivery hooks: host hooks, a hooks module, or the configured mail transport. */
export { resolveHooks, type ResolveHooksOptions } from "./resolve.ts";
export { buildLink, HOOK_KINDS, HOOK_NAMES, type HookKind, type HookName, type LinkKind } from "./kinds.ts";
export type { MailFile } from "./file-transport.ts";
