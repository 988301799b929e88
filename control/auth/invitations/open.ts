/**
 * An open invitation is a reserved User row (no user name, no credential) that invitation tokens
 * for the address point at. Tokens record the normalised address, so `Bob@Example.com` and
 * `bob@example.com` are one invitation.
 */
import type { Tx } from "../single-use/index.ts";

export const INVITATION = "invitation";

export async function findOpenInvitation(tx: Tx, normalizedEmail: string): Promise<{ id: string; email: string | null } | null> {
  return tx.user.findFirst({
    where: { reserved: true, singleUseTokens: { some: { kind: INVITATION, email: normalizedEmail } } },
    select: { id: true, email: true },
    orderBy: { createdAt: "asc" },
  });
}
