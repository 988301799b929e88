/**
 * The bot routes' one answer for a session id that names nothing: 404 `{detail: "Session not found."}`.
 */
import { AppError } from "../../http/errors.ts";
import type { BotSession } from "../../../prisma/generated/sqlite/client.ts";
import type { SessionRepo } from "../session-repo.ts";

export const sessionNotFound = (): AppError => new AppError("not_found", { message: "Session not found." });

export async function sessionOr404(repo: SessionRepo, id: string | undefined): Promise<BotSession> {
  const row = await repo.find(id ?? "");
  if (!row) throw sessionNotFound();
  return row;
}
