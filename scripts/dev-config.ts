/**
 * `make run` on a fresh machine: writes data/config.json once, with a random signing key and bot
 * access token, the file mail transport into data/mail/, and local folders for recordings and
 * media; prints the secrets once. Later runs reuse the file.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";

const path = "data/config.json";
if (existsSync(path)) process.exit(0);
mkdirSync("data/mail", { recursive: true });
mkdirSync("media", { recursive: true });
const botToken = randomBytes(24).toString("base64url");
const config = {
  LocalLogin: { SigningKey: randomBytes(32).toString("base64"), AllowSelfRegistration: true },
  Mail: { Transport: "file", File: { Directory: "./data/mail" } },
  BOT_ACCESS_TOKEN: botToken,
  RECORDINGS_DIR: "./recordings",
  MEDIA_DIR: "./media",
};
writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
console.log(`Created ${path} (development configuration; keep it private).`);
console.log(`  Bot API token (Authorization: Bearer …): ${botToken}`);
console.log("  Mail is written as JSON files to data/mail/.");
