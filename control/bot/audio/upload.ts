/**
 * The multipart upload of `POST /audio/{id}/play/upload` (decisions.md: field `file`, limit
 * MAX_UPLOAD_MB → 413). The session is checked before a byte is stored, so a 409 never costs a
 * 100 MB write. The file goes to disk (never memory) in the session's work dir, which the worker
 * removes when the session ends; a refused request deletes its file at once.
 */
import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { extname, join } from "node:path";
import type { RequestHandler } from "express";
import multer from "multer";
import { AppError } from "../../http/errors.ts";
import type { SessionRunner } from "../supervisor/session-runner.ts";
import { audioSession, type AudioDeps } from "./worker-call.ts";

export const UPLOAD_FIELD = "file";

/** Where the upload middleware leaves the checked session for the handler. */
export function uploadRunner(locals: Record<string, unknown>): SessionRunner | undefined {
  return locals.audioRunner as SessionRunner | undefined;
}

export function uploadMiddleware(deps: AudioDeps): RequestHandler {
  const limitBytes = Math.floor(deps.config.bot.MAX_UPLOAD_MB * 1024 * 1024);
  return (req, res, next) => {
    void (async () => {
      const runner = await audioSession(deps, String(req.params.session_id ?? ""));
      res.locals.audioRunner = runner;
      const dir = join(runner.paths.workDir, "uploads");
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const upload = multer({
        storage: multer.diskStorage({
          destination: dir,
          // A fresh name: the client's file name never becomes a path on this machine.
          filename: (_req, file, cb) => cb(null, `${randomUUID()}${extname(file.originalname).replace(/[^.\w]/g, "").slice(0, 10)}`),
        }),
        limits: { fileSize: limitBytes, files: 1, fields: 10 },
      }).single(UPLOAD_FIELD);
      // Anything not handed to the worker (422, 409, 413 after a partial write) is deleted. A form
      // multer gave up on (a second file, too many fields) may leave `req.file` without a path;
      // multer removes what it wrote then.
      res.once("finish", () => {
        const path = req.file?.path;
        if (res.statusCode >= 400 && typeof path === "string") rm(path, { force: true }).catch((err: unknown) => req.log.warn({ err }, "a refused upload could not be deleted"));
      });
      upload(req, res, (err?: unknown) => next(err === undefined ? undefined : malformedForm(err)));
    })().catch(next);
  };
}

/**
 * What the form parser (busboy, through multer) refuses: a body cut short, a bad part header, no
 * boundary. Those errors carry no `code`; a disk error writing the file (ENOSPC...) and multer's
 * own limits (MulterError, mapped by the error middleware) pass as they are.
 */
function malformedForm(err: unknown): unknown {
  if (!(err instanceof Error) || err.name === "MulterError" || "code" in err || err instanceof AppError) return err;
  return new AppError("validation_failed", { items: [{ loc: ["body"], msg: `The form could not be read: ${err.message}`, type: "value_error" }], cause: err });
}
