/**
 * Creates a user with a password credential in one write: self-registration and admin creation
 * share it. The user-name unique index decides races: a taken name is 409, never two accounts.
 */
import { randomUUID } from "node:crypto";
import { isUniqueViolation } from "../../db/client.ts";
import { fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { normaliseEmail, normaliseUserName } from "../sign-in/find-credential.ts";

export async function createPasswordAccount(ctx: AuthContext, input: { userName: string; email: string | null; password: string }): Promise<string> {
  const passwordHash = await ctx.hasher.hash(input.password);
  const userId = randomUUID();
  try {
    await ctx.db.user.create({
      data: {
        id: userId,
        securityStamp: randomUUID(),
        credential: {
          create: {
            userName: input.userName,
            normalizedUserName: normaliseUserName(input.userName),
            email: input.email,
            normalizedEmail: input.email === null ? null : normaliseEmail(input.email),
            passwordHash,
          },
        },
      },
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fail.conflict("This user name is taken. Choose another one.");
    throw error;
  }
  return userId;
}
