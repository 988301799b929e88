/**
 * `Mail:Transport=smtp`: a plain, short message through nodemailer to `Mail:Smtp:Url`, from
 * `Mail:From`. The body holds the link (or the issued password); it is never logged.
 */
import nodemailer from "nodemailer";
import type { HookMessage } from "../../app/host.ts";
import type { HookKind } from "./kinds.ts";

const SUBJECT: Record<HookKind, string> = {
  "password-reset": "Reset your password",
  "email-verification": "Confirm your email address",
  "magic-link": "Your sign-in link",
  "admin-password-issued": "Your account password",
  invitation: "You are invited",
};

function body(kind: HookKind, message: HookMessage, link: string | null): string {
  const hello = message.userName ? `Hello ${message.userName},` : "Hello,";
  const notYou = "If you did not ask for this, ignore this message.";
  switch (kind) {
    case "password-reset":
      return `${hello}\n\nOpen this link to choose a new password:\n${link}\n\n${notYou}\n`;
    case "email-verification":
      return `${hello}\n\nOpen this link to confirm this email address:\n${link}\n\n${notYou}\n`;
    case "magic-link":
      return `${hello}\n\nOpen this link to sign in:\n${link}\n\n${notYou}\n`;
    case "invitation":
      return `Hello,\n\nYou are invited to create an account. Open this link to choose a user name and password:\n${link}\n`;
    case "admin-password-issued":
      return `${hello}\n\nAn administrator set a password for your account:\n\n${message.password ?? ""}\n\nSign in with it and change it.\n`;
  }
}

export function smtpTransport(url: string, from: string) {
  const transporter = nodemailer.createTransport(url);
  return async (kind: HookKind, message: HookMessage, link: string | null): Promise<void> => {
    await transporter.sendMail({ from, to: message.to, subject: SUBJECT[kind], text: body(kind, message, link) });
  };
}
