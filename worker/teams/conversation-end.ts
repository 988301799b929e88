import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { listenSignalling, type SignallingFrame } from "./ws-frames.ts";

/**
 * What a `conversation/conversationEnd/` frame says (teams-dom.md "2026 facts"): subCode 5854
 * denied, 5723 anonymous join disabled by tenant policy, 5000 or 5300 removed (its `sender` names
 * who did it); any other end of the conversation is the meeting ending for the bot.
 */
export type ConversationEndKind = "denied" | "anonymous_join_disabled" | "removed" | "ended";

export interface ConversationEnd {
  kind: ConversationEndKind;
  subCode: number | null;
  /** Who ended it, when the frame says (a removal's organiser). */
  sender: string | null;
  at: number;
}

const CONVERSATION_END = /conversation\/?[^/]*\/conversationEnd\/?|conversationEnd/i;

/** The first `subCode` anywhere in the body (its nesting differs between builds), as a number. */
function findKey(value: unknown, key: RegExp, depth = 0): unknown {
  if (depth > 6 || typeof value !== "object" || value === null) return undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (key.test(k) && (typeof v === "number" || typeof v === "string" || (typeof v === "object" && v !== null))) return v;
  }
  for (const v of Object.values(value as Record<string, unknown>)) {
    const found = findKey(v, key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

function senderName(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) {
    const v = value as Record<string, unknown>;
    for (const k of ["displayName", "name", "id", "mri"]) if (typeof v[k] === "string") return v[k];
  }
  return null;
}

export function readConversationEnd(frame: SignallingFrame): ConversationEnd | null {
  if (!CONVERSATION_END.test(frame.url)) return null;
  const raw = findKey(frame.body, /^subcode$/i);
  const subCode = typeof raw === "number" ? raw : typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : null;
  const kind: ConversationEndKind =
    subCode === 5854 ? "denied" : subCode === 5723 ? "anonymous_join_disabled" : subCode === 5000 || subCode === 5300 ? "removed" : "ended";
  return { kind, subCode, sender: senderName(findKey(frame.body, /^sender$/i)), at: frame.receivedAt };
}

export interface ConversationEndWatch {
  /** The first conversationEnd the page received, null until one came. */
  latest(): ConversationEnd | null;
  dispose(): void;
}

/** Watches the page's signalling WebSocket for the end of the bot's conversation. */
export function watchConversationEnd(page: Page, logger: Logger): ConversationEndWatch {
  let first: ConversationEnd | null = null;
  const listener = listenSignalling(page, (frame) => {
    const end = readConversationEnd(frame);
    if (!end || first) return;
    first = end;
    logger.info({ kind: end.kind, sub_code: end.subCode, sender: end.sender }, "teams: conversationEnd on the signalling WebSocket");
  });
  return { latest: () => first, dispose: () => listener.dispose() };
}
