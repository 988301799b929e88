/**
 * `resolveHooks`: the delivery hooks the service calls. Per hook, the first that has one wins:
 * the host program's hooks (factory argument), then `Hooks:Module`, then `Mail:Transport` (smtp
 * or file) for the kinds listed in `Mail:Hooks`.
 *
 * A secret (token, password) exists in the clear only for the hook call: transport failures are
 * logged with the kind, user id and error code only, and rethrown as an error whose message holds
 * no part of the message (the caller may log it or turn it into a 502).
 */
import type { Config } from "../../config/index.ts";
import type { DeliveryHooks, HookMessage } from "../../app/host.ts";
import type { Logger } from "../../../shared/log/logger.ts";
import { fileTransport } from "./file-transport.ts";
import { buildLink, HOOK_KINDS, HOOK_NAMES, hasLink, type HookKind } from "./kinds.ts";
import { loadHookModule } from "./module-hooks.ts";
import { smtpTransport } from "./smtp-transport.ts";

type Send = (kind: HookKind, message: HookMessage, link: string | null) => Promise<void>;

export interface ResolveHooksOptions {
  /** Clock for the file transport's `createdAt`. */
  now?: () => Date;
}

export async function resolveHooks(config: Config, hostHooks: DeliveryHooks, logger: Logger, options: ResolveHooksOptions = {}): Promise<DeliveryHooks> {
  const fromModule = config.Hooks.Module !== undefined ? await loadHookModule(config.Hooks.Module) : {};
  const fromTransport = transportHooks(config, logger, options.now ?? (() => new Date()));
  const hooks: DeliveryHooks = {};
  for (const name of HOOK_NAMES) {
    const hook = hostHooks[name] ?? fromModule[name] ?? fromTransport[name];
    if (hook) hooks[name] = hook;
  }
  return hooks;
}

function transportHooks(config: Config, logger: Logger, now: () => Date): DeliveryHooks {
  const mail = config.Mail;
  let send: Send;
  if (mail.Transport === "smtp" && mail.Smtp.Url !== undefined) send = smtpTransport(mail.Smtp.Url, mail.From);
  else if (mail.Transport === "file") send = fileTransport(mail.File.Directory, now);
  else return {};
  const hooks: DeliveryHooks = {};
  for (const name of HOOK_NAMES) {
    const kind = HOOK_KINDS[name];
    if (!mail.Hooks.includes(kind)) continue;
    hooks[name] = async (message) => {
      const link = message.link ?? (hasLink(kind) && message.token !== undefined ? buildLink(config, kind, message.token) : null);
      try {
        await send(kind, message, link);
      } catch (error) {
        const e = error as { code?: unknown; responseCode?: unknown; command?: unknown };
        logger.warn({ kind, userId: message.userId, transport: mail.Transport, errorCode: e.code, responseCode: e.responseCode, command: e.command }, "mail delivery failed");
        throw new Error(`${mail.Transport} delivery of a ${kind} message failed${typeof e.code === "string" ? ` (${e.code})` : ""}`);
      }
      logger.info({ kind, userId: message.userId, transport: mail.Transport }, "mail delivered");
    };
  }
  return hooks;
}
