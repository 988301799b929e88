/**
 * Speaking into the meeting (recorder-bot.md "audio endpoints", Rules 1-3, decisions.md): play a
 * file from MEDIA_DIR or an upload, stop, and a live stream whose ingest URL carries its own token.
 * Every route answers 404 for an unknown session and 409 while playback is off or the bot is not
 * in the call; the worker does the playing (worker/playback/).
 */
import { z } from "zod";
import { AppError, fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { RAW_FORMATS, volumeSchema } from "../../../worker/playback/ops.ts";
import { resolveMediaPath } from "../audio/media-path.ts";
import { pipeIngest } from "../audio/ingest-pipe.ts";
import { connectWorkerSocket } from "../worker-socket.ts";
import { StreamRegistry } from "../audio/streams.ts";
import { UPLOAD_FIELD, uploadMiddleware, uploadRunner } from "../audio/upload.ts";
import { audioSession, callWorker } from "../audio/worker-call.ts";
import type { BotRouteDeps } from "../context.ts";
import { sessionOr404 } from "./session-or-404.ts";

/** Query and form values arrive as text; JSON bodies carry real booleans. */
const textBool = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")]);

const playBody = z.object({
  path: z.string().min(1),
  loop: z.boolean().default(false),
  volume: volumeSchema.default(1),
  unmute: z.boolean().default(true),
});
const uploadForm = z.object({ unmute: textBool.default(true), volume: z.coerce.number().pipe(volumeSchema).default(1) });
/** The form as /docs shows it: the file part (read by multer, not by uploadForm) and typed fields. */
const uploadFormDoc = z.object({ [UPLOAD_FIELD]: z.file(), unmute: z.boolean().default(true), volume: volumeSchema.default(1) });
const stopQuery = z.object({ mute_after: textBool.default(false) });
/** Containers are detected from the bytes (Rule 3); naming one is accepted as a hint only. */
const CONTAINER_FORMATS = ["auto", "mp3", "ogg", "wav", "webm"] as const;
const streamBody = z.preprocess((v) => v ?? {}, z.object({ format: z.enum([...RAW_FORMATS, ...CONTAINER_FORMATS]).default("auto"), unmute: z.boolean().default(true) }));

const playingSchema = z.object({ session_id: z.string(), status: z.literal("playing"), unmuted: z.boolean() });
const stoppedSchema = z.object({ session_id: z.string(), status: z.literal("stopped"), muted: z.boolean() });
const streamSchema = z.object({ session_id: z.string(), ingest_url: z.string(), token: z.string(), format: z.string() });
const closedSchema = z.object({ session_id: z.string(), status: z.literal("closed") });
const ingestSchema = z.object({ session_id: z.string(), bytes_received: z.number().int() });

const refusals = {
  401: { description: "missing or wrong BOT_ACCESS_TOKEN" },
  404: { description: "unknown session" },
  409: { description: "the bot is not in the call, playback is disabled (MIC_PLAYBACK_ENABLED), or a stream is already open" },
};

const unmutedOf = (result: unknown): boolean => (result as { unmuted?: boolean } | undefined)?.unmuted === true;

export function audioRoutes(deps: BotRouteDeps): void {
  const { target, config, repo, supervisor, auth } = deps;
  const streams = new StreamRegistry();
  const common = { family: "bot", tag: "audio" } as const;

  mountRoute(target, {
    ...common,
    method: "post",
    path: "/audio/:session_id/play",
    summary: "Play a file from MEDIA_DIR into the meeting (a new play replaces the current one)",
    security: "botToken",
    before: [auth],
    body: playBody,
    responses: {
      200: { description: "playing", schema: playingSchema },
      400: { description: "path outside MEDIA_DIR, or not audio" },
      ...refusals,
      404: { description: "unknown session, or no such file in MEDIA_DIR" },
      422: { description: "invalid body" },
    },
    handler: async ({ params, body, res }) => {
      const id = params.session_id ?? "";
      const runner = await audioSession(deps, id);
      const path = await resolveMediaPath(config.bot.MEDIA_DIR, body.path);
      const result = await callWorker(runner, "play", { path, loop: body.loop, volume: body.volume, unmute: body.unmute, deleteAfter: false });
      res.json({ session_id: id, status: "playing", path: body.path, loop: body.loop, volume: body.volume, unmuted: unmutedOf(result) });
    },
  });

  mountRoute(target, {
    ...common,
    method: "post",
    path: "/audio/:session_id/play/upload",
    summary: `Play an uploaded file (multipart field "${UPLOAD_FIELD}"); it is deleted once it finished playing`,
    security: "botToken",
    before: [auth, uploadMiddleware(deps)],
    body: uploadForm,
    bodyDoc: uploadFormDoc,
    bodyContentType: "multipart/form-data",
    responses: { 200: { description: "playing", schema: playingSchema }, 400: { description: "not audio" }, ...refusals, 413: { description: "larger than MAX_UPLOAD_MB" }, 422: { description: "no file" } },
    handler: async ({ params, body, req, res }) => {
      const id = params.session_id ?? "";
      const runner = uploadRunner(res.locals);
      const file = req.file;
      if (!runner) throw new AppError("internal");
      if (!file) throw new AppError("validation_failed", { items: [{ loc: ["body", UPLOAD_FIELD], msg: "Field required", type: "missing" }] });
      const result = await callWorker(runner, "play", { path: file.path, loop: false, volume: body.volume, unmute: body.unmute, deleteAfter: true });
      res.json({ session_id: id, status: "playing", filename: file.originalname, bytes: file.size, unmuted: unmutedOf(result) });
    },
  });

  mountRoute(target, {
    ...common,
    method: "post",
    path: "/audio/:session_id/stop",
    summary: "Stop playback; with mute_after=true the bot is muted afterwards",
    security: "botToken",
    before: [auth],
    query: stopQuery,
    responses: { 200: { description: "stopped", schema: stoppedSchema }, ...refusals, 422: { description: "invalid query" } },
    handler: async ({ params, query, res }) => {
      const id = params.session_id ?? "";
      const runner = await audioSession(deps, id);
      const result = (await callWorker(runner, "stop", { muteAfter: query.mute_after })) as { muted?: boolean } | undefined;
      res.json({ session_id: id, status: "stopped", muted: result?.muted === true });
    },
  });

  mountRoute(target, {
    ...common,
    method: "post",
    path: "/audio/:session_id/stream",
    summary: "Open a live stream: PUT audio to the returned ingest_url (one stream per session)",
    security: "botToken",
    before: [auth],
    body: streamBody,
    responses: { 200: { description: "the ingest URL and its token", schema: streamSchema }, ...refusals, 422: { description: "unknown format" } },
    handler: async ({ params, body, req, res }) => {
      const id = params.session_id ?? "";
      const runner = await audioSession(deps, id);
      if (!streams.reserve(id)) throw fail.conflict("A stream is already open for this session.");
      let token: string;
      try {
        const raw = (RAW_FORMATS as readonly string[]).includes(body.format) ? (body.format as (typeof RAW_FORMATS)[number]) : null;
        const result = (await callWorker(runner, "stream_open", { format: raw, unmute: body.unmute })) as { socketPath: string };
        token = streams.open(id, result.socketPath, body.format);
      } finally {
        streams.release(id);
      }
      // The token dies with the session even if nobody closes the stream.
      void runner.done.then(() => streams.close(id));
      const base = (config.bot.PUBLIC_BASE_URL ?? `${req.protocol}://${req.get("host") ?? "localhost"}`).replace(/\/+$/, "");
      res.json({ session_id: id, ingest_url: `${base}/audio/${id}/ingest/${token}`, token, format: body.format });
    },
  });

  mountRoute(target, {
    ...common,
    method: "put",
    path: "/audio/:session_id/ingest/:token",
    summary: "Push audio (chunked) into the open stream; the token in the path is the credential",
    bodyContentType: "application/octet-stream",
    responses: { 200: { description: "the body ended", schema: ingestSchema }, 404: { description: "unknown session, or unknown or closed token" }, 409: refusals[409] },
    handler: async ({ params, req, res }) => {
      const id = params.session_id ?? "";
      const closed = () => new AppError("not_found", { message: "Unknown or closed stream." });
      await sessionOr404(repo, id);
      if (!config.bot.MIC_PLAYBACK_ENABLED) throw fail.conflict("Microphone playback is disabled (MIC_PLAYBACK_ENABLED is off).");
      const stream = streams.match(id, params.token ?? "");
      if (!stream) throw closed();
      if (!supervisor.get(id)) {
        streams.close(id);
        throw closed();
      }
      if (stream.ingest) throw fail.conflict("Audio is already being pushed to this stream.");
      // Claimed before the first await, so two racing PUTs cannot both get through.
      let cancelled = false;
      const claim = { end: () => void (cancelled = true) };
      stream.ingest = claim;
      const socket = await connectWorkerSocket(stream.socketPath).catch(() => null);
      if (!socket || cancelled) {
        socket?.destroy();
        if (stream.ingest === claim) stream.ingest = null;
        throw closed();
      }
      const ingest = pipeIngest(req, socket);
      stream.ingest = ingest;
      const result = await ingest.done;
      if (stream.ingest === ingest) stream.ingest = null;
      // Cut short (stream closed, replaced, session over): the rest of the body is not wanted.
      if (!result.complete) res.setHeader("Connection", "close");
      res.json({ session_id: id, bytes_received: result.bytes });
    },
  });

  mountRoute(target, {
    ...common,
    method: "delete",
    path: "/audio/:session_id/stream",
    summary: "Close the live stream: its ingest URL stops working and an ongoing push is ended",
    security: "botToken",
    before: [auth],
    responses: { 200: { description: "closed (also when none was open)", schema: closedSchema }, ...refusals },
    handler: async ({ params, res }) => {
      const id = params.session_id ?? "";
      await sessionOr404(repo, id);
      if (!config.bot.MIC_PLAYBACK_ENABLED) throw fail.conflict("Microphone playback is disabled (MIC_PLAYBACK_ENABLED is off).");
      // The URL dies first, whatever the worker's state: a closed stream must never accept bytes.
      streams.close(id);
      // decisions.md: an audio request the session cannot take now (not in the call) is 409,
      // closing included; the token is already dead either way.
      const runner = await audioSession(deps, id);
      await callWorker(runner, "stream_close", {});
      res.json({ session_id: id, status: "closed" });
    },
  });
}
