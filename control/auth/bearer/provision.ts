/**
 * The local User row of an external subject. The first request carrying a new (issuer, subject)
 * creates it; the unique index on (externalIssuer, externalSubject) makes concurrent first
 * requests converge on one row: the loser of the insert race reads the winner's row.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { JWTPayload } from "jose";
import { isUniqueViolation, type Db } from "../../db/client.ts";

interface Profile {
  email: string | null;
  name: string | null;
  externalHandle: string | null;
}

function profileOf(claims: JWTPayload): Profile {
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  return { email: str(claims.email), name: str(claims.name), externalHandle: str(claims.preferred_username) };
}

export async function provisionExternalUser(db: Db, issuer: string, subject: string, claims: JWTPayload): Promise<string> {
  const where = { externalIssuer_externalSubject: { externalIssuer: issuer, externalSubject: subject } };
  const profile = profileOf(claims);
  const existing = await db.user.findUnique({ where, select: { id: true, email: true, name: true, externalHandle: true } });
  if (existing) {
    // The provider owns these profile fields; write only when they moved (no write per request).
    const changed = (Object.keys(profile) as (keyof Profile)[]).some((k) => profile[k] !== null && profile[k] !== existing[k]);
    if (changed) {
      await db.user.update({
        where: { id: existing.id },
        data: {
          email: profile.email ?? existing.email,
          name: profile.name ?? existing.name,
          externalHandle: profile.externalHandle ?? existing.externalHandle,
        },
      });
    }
    return existing.id;
  }
  try {
    const created = await db.user.create({
      data: { id: randomUUID(), securityStamp: randomBytes(16).toString("hex"), externalIssuer: issuer, externalSubject: subject, ...profile },
      select: { id: true },
    });
    return created.id;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await db.user.findUnique({ where, select: { id: true } });
    if (!winner) throw error;
    return winner.id;
  }
}
