/**
 * Serialises the trusts of one user's devices, so the cap (trust.ts `enforceCap`) counts every
 * other trust. On PostgreSQL each trust runs at READ COMMITTED: without a lock, parallel trusts
 * each insert their row, count only the rows already committed, see fewer than
 * `MaxDevicesPerUser` and revoke nothing, so the user ends over the cap (audit F1). A
 * transaction-scoped advisory lock keyed by the user id, taken before the insert, makes the next
 * trust wait for the previous one's commit; its count (a new snapshot per statement) then sees it.
 * An advisory lock, not a row lock on the user: it takes part in no other lock order (the insert's
 * foreign-key lock on the user row, a credential change updating it), so it cannot deadlock.
 *
 * SQLite needs nothing: its transactions already run one at a time on the one connection
 * (db/sqlite-driver.ts), and across processes a writer holds the database's write lock to commit.
 */
import type { AuthContext } from "../context.ts";
import type { Tx } from "../twofactor/tx.ts";

/** First key of the two-key advisory lock space: "tdev" in ASCII, apart from other features' locks. */
const DEVICE_CAP_LOCK = 0x74646576;

export async function lockDeviceCap(ctx: AuthContext, tx: Tx, userId: string): Promise<void> {
  // No cap (0), nothing to count.
  if (ctx.provider !== "postgresql" || ctx.config.TrustedDevices.MaxDevicesPerUser <= 0) return;
  // Released by the transaction's COMMIT or ROLLBACK; a hash collision only serialises two users.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${DEVICE_CAP_LOCK}::int4, hashtext(${userId}::text))`;
}
