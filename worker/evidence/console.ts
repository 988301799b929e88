import type { ConsoleMessage, Page } from "playwright-core";
import type { Redactor } from "./redact.ts";

/** The issue's bound: the last 500 console and page-error lines. */
export const CONSOLE_LINES = 500;

export interface ConsoleTail {
  lines(): string[];
  dispose(): void;
}

/** Keeps the page's last console messages and uncaught page errors, redacted as they arrive. */
export function tailConsole(page: Page, redact: Redactor): ConsoleTail {
  const lines: string[] = [];
  const push = (line: string) => {
    lines.push(redact(line.replace(/\s+$/, "")));
    if (lines.length > CONSOLE_LINES) lines.splice(0, lines.length - CONSOLE_LINES);
  };
  const onConsole = (m: ConsoleMessage) => push(`${new Date().toISOString()} [console.${m.type()}] ${m.text()}`);
  const onError = (e: Error) => push(`${new Date().toISOString()} [pageerror] ${e.message}${e.stack ? `\n${e.stack}` : ""}`);
  page.on("console", onConsole);
  page.on("pageerror", onError);
  return {
    lines: () => [...lines],
    dispose() {
      page.off("console", onConsole);
      page.off("pageerror", onError);
    },
  };
}
