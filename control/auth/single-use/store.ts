/**
 * The shared store of single-use tokens (reset, invitation, email verification, magic link).
 *
 * - Issue: 256 random bits, base64url; only the SHA-256 is stored, so a database leak hands out
 *   nothing redeemable. The raw token is returned once, for the one hook call.
 * - Retire: issuing may retire the earlier live tokens of the same kind and user (and address),
 *   so an older mail lying in an inbox stops working once a newer one was asked for.
 * - Consume: one conditional update (unconsumed, unretired, unexpired) checked by its row count.
 *   Of any number of concurrent redemptions exactly one sees count 1 (replay and race both lose);
 *   run it inside the transaction that applies the token's effect, so a refused effect (409)
 *   rolls the consumption back and leaves the token usable.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../../db/client.ts";
import type { AuthContext } from "../context.ts";
import { hashToken, newOpaqueToken } from "../tokens/opaque.ts";
import { lifetimeOf, type SingleUseKind } from "./kinds.ts";

/** A Prisma transaction client (or the client itself: both have the same model API). */
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export interface IssueInput {
  kind: SingleUseKind;
  userId: string;
  /** Target address (normalised), recorded with the token. */
  email?: string | null;
  /** Retire this user's earlier live tokens of the same kind first. */
  retireEarlier?: boolean;
}

export interface ConsumedToken {
  id: string;
  userId: string;
  email: string | null;
  createdAt: Date;
}

/** Issues a token; returns the raw secret (never stored, never logged) and the row id. */
export async function issueSingleUseToken(ctx: AuthContext, tx: Tx, input: IssueInput): Promise<{ token: string; id: string }> {
  const now = ctx.now();
  if (input.retireEarlier) await retireTokens(tx, { kind: input.kind, userId: input.userId }, now);
  const token = newOpaqueToken();
  const id = randomUUID();
  await tx.singleUseToken.create({
    data: {
      id,
      kind: input.kind,
      tokenHash: hashToken(token),
      userId: input.userId,
      email: input.email ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + lifetimeOf(ctx.config, input.kind)),
    },
  });
  return { token, id };
}

/** Retires live tokens of a kind for a user (or one token by id); returns how many. */
export async function retireTokens(tx: Tx, where: { kind: SingleUseKind; userId: string; id?: string }, now: Date): Promise<number> {
  const { count } = await tx.singleUseToken.updateMany({
    where: { ...where, consumedAt: null, retiredAt: null },
    data: { retiredAt: now },
  });
  return count;
}

/**
 * Redeems a raw token of the given kind: null when unknown, of another kind, used, retired or
 * expired (callers answer each the same way, so the refusal tells nothing).
 */
export async function consumeSingleUseToken(tx: Tx, kind: SingleUseKind, token: string, now: Date): Promise<ConsumedToken | null> {
  const tokenHash = hashToken(token);
  const { count } = await tx.singleUseToken.updateMany({
    where: { tokenHash, kind, consumedAt: null, retiredAt: null, expiresAt: { gt: now } },
    data: { consumedAt: now },
  });
  if (count !== 1) return null;
  const row = await tx.singleUseToken.findUnique({ where: { tokenHash }, select: { id: true, userId: true, email: true, createdAt: true } });
  return row;
}
