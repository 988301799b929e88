/**
 * The 10,000 most common passwords (common-passwords.txt, source and licence in its header),
 * loaded once. NIST SP 800-63B 5.1.1.2: refuse passwords known to be commonly used, because
 * credential-stuffing and spraying try exactly these first.
 */
import { readFileSync } from "node:fs";
import { projectPath } from "../../../shared/runtime/layout.ts";

let list: ReadonlySet<string> | undefined;

function load(): ReadonlySet<string> {
  const text = readFileSync(projectPath("control", "auth", "passwords", "common-passwords.txt"), "utf8");
  return new Set(
    text
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("# "))
      .map((line) => line.toLowerCase()),
  );
}

/** Case-insensitive: "Password" is as guessable as "password". */
export function isCommonPassword(password: string): boolean {
  list ??= load();
  return list.has(password.toLowerCase());
}
