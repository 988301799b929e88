/**
 * `Mail:Transport=file`: one JSON file per message in `Mail:File:Directory`, for development and
 * for tests that read the mail a user would get. Written to a temp file and renamed, so a reader
 * polling the folder never sees a half-written message; mode 0600 (folder 0700) because the file
 * holds a live secret that other local users must not read.
 */
import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { HookMessage } from "../../app/host.ts";
import type { HookKind } from "./kinds.ts";

export interface MailFile {
  kind: HookKind;
  to: string;
  token?: string;
  password?: string;
  link: string | null;
  userId: string;
  userName: string | null;
  createdAt: string;
}

export function fileTransport(directory: string, now: () => Date) {
  const folder = resolve(directory);
  return async (kind: HookKind, message: HookMessage, link: string | null): Promise<void> => {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const createdAt = now();
    const content: MailFile = {
      kind,
      to: message.to,
      ...(message.token !== undefined ? { token: message.token } : {}),
      ...(message.password !== undefined ? { password: message.password } : {}),
      link,
      userId: message.userId,
      userName: message.userName,
      createdAt: createdAt.toISOString(),
    };
    // Sortable by time; the UUID keeps two messages of the same millisecond apart.
    const name = `${createdAt.toISOString().replace(/[:.]/g, "-")}-${kind}-${randomUUID()}.json`;
    const temp = join(folder, `.${name}.tmp`);
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(content, null, 2)}\n`);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    await rename(temp, join(folder, name));
  };
}
