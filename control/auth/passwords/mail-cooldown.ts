/**
 * `MailRequestCooldown`: one mail per key (address or account) per cooldown, shared by every
 * instance through MailCooldown rows. Taking the slot is atomic (insert, or a conditional update
 * of a row older than the cooldown), so concurrent requests for one address send one mail; a
 * mailbox cannot be flooded by repeating the request.
 */
import { isUniqueViolation } from "../../db/client.ts";
import type { AuthContext } from "../context.ts";

/** True when this call took the slot (send); false while the cooldown runs (drop). */
export async function takeMailSlot(ctx: AuthContext, key: string): Promise<boolean> {
  const cooldown = ctx.config.LocalLogin.MailRequestCooldown;
  if (cooldown <= 0) return true;
  const now = ctx.now();
  const { count } = await ctx.db.mailCooldown.updateMany({
    where: { key, lastAt: { lte: new Date(now.getTime() - cooldown) } },
    data: { lastAt: now },
  });
  if (count === 1) return true;
  try {
    await ctx.db.mailCooldown.create({ data: { key, lastAt: now } });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
