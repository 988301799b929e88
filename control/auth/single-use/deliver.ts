/**
 * Handing a secret to a delivery hook. The secret exists in the clear only for this one call:
 * failures are logged with the hook's name, the user id, the error's class and a plain code (never
 * its message or properties, which a host hook might have built from the message it received),
 * and rethrown for the caller
 * to turn into a 502 or to swallow (background mail).
 */
import type { DeliveryHooks, HookMessage } from "../../app/host.ts";
import type { AuthContext } from "../context.ts";

export type HookName = keyof DeliveryHooks;

/**
 * The hook, or a throw at the call site: the optional hooks' routes are mapped only when the hook
 * is registered, so reaching a service function without one is a programming error, not a
 * request to answer.
 */
export function requireHook(ctx: AuthContext, name: HookName): (message: HookMessage) => Promise<void> {
  const hook = ctx.hooks[name];
  if (!hook) throw new Error(`no ${name} delivery hook is registered; register it before calling this`);
  return hook;
}

export class DeliveryFailed extends Error {
  override readonly name = "DeliveryFailed";
  constructor(readonly hook: HookName) {
    super(`the ${hook} delivery hook failed`);
  }
}

/** A code such as `EAUTH` or `ECONNREFUSED`: short and plain, so it cannot carry a secret. */
const PLAIN_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * What may be logged of a hook's error: its class and a plain `code`, nothing else. The message
 * and other properties (an SMTP server's reply, a request body) may quote the mail the hook was
 * building, and so the raw token or link (issue #14).
 */
export function hookFailureFields(error: unknown): { errorKind: string; errorCode?: string } {
  const errorKind = error instanceof Error ? error.name : typeof error;
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  const text = typeof code === "number" ? String(code) : code;
  return typeof text === "string" && PLAIN_CODE.test(text) ? { errorKind, errorCode: text } : { errorKind };
}

/** Calls the hook; on failure logs without any part of the message and throws DeliveryFailed. */
export async function deliver(ctx: AuthContext, name: HookName, message: HookMessage): Promise<void> {
  const hook = requireHook(ctx, name);
  try {
    await hook(message);
  } catch (error) {
    ctx.logger.error({ hook: name, userId: message.userId, ...hookFailureFields(error) }, "delivery hook failed");
    throw new DeliveryFailed(name);
  }
  ctx.logger.info({ hook: name, userId: message.userId }, "delivery hook called");
}
