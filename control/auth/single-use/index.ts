/** Single-use tokens: issue (hashed, with lifetime per kind), retire, consume atomically. */
export { consumeSingleUseToken, issueSingleUseToken, retireTokens, type ConsumedToken, type IssueInput, type Tx } from "./store.ts";
export { deliver, DeliveryFailed, hookFailureFields, requireHook, type HookName } from "./deliver.ts";
export { lifetimeOf, type SingleUseKind } from "./kinds.ts";
