/**
 * Live listening in the worker (issue #18): answers the `listen_open` op with the path of the
 * listen socket (opened on first use), serves each audio stream the control plane opens from a
 * tap (taps.ts: the page tap without a microphone, the recording's sink otherwise or when the
 * page plays what its tap cannot read), and forwards events (status now; speech and
 * participants through timeline-adapter.ts). Independent of MIC_PLAYBACK_ENABLED and of `record`.
 */
import type { WorkerRequest, WorkerResponse, SessionStatus } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { listenEventSchema, type ListenEvent, type ListenEventSink } from "../../shared/listen/events.ts";
import { isListenOp, listenOpenArgsSchema } from "../../shared/listen/ops.ts";
import { CLOSE, CLOSE_REASON } from "../../shared/listen/protocol.ts";
import type { Page } from "playwright-core";
import { tapLatencyMs } from "./capture.ts";
import { EncodedReceiver } from "./page-tap/encoded-receiver.ts";
import { PageTap, encodedPathEnabled, installPageTap, pageTapEnabled, pageTapReadsTracks } from "./page-tap/tap.ts";
import { AudioTaps } from "./taps.ts";
import { IDLE_PACE_MS } from "./sink-pacer.ts";
import { openListenServer, type EndNotice, type ListenServer } from "./server.ts";

export type Answer = Omit<WorkerResponse, "type" | "id">;

export interface ListenDeps {
  workDir: string;
  pulseEnv: Record<string, string>;
  /** The recording's source (PulseDaemon.recMonitor): listeners hear what the file gets. */
  source: string;
  /** Whether the browser has a microphone: it sets the taps' fragment (capture.ts: tapLatencyMs). */
  mic: boolean;
  /** LISTEN_LOW_LATENCY: the sink paced while nobody listens too (page tap only: sink-pacer.ts). */
  lowLatency?: boolean;
  logger: Logger;
  status: () => SessionStatus | null;
}

export interface Listen extends ListenEventSink {
  /** Whether a request's op is a listen op (the rest go to playback). */
  handles(request: WorkerRequest): boolean;
  handle(request: WorkerRequest): Promise<Answer>;
  /** The tap's processes (benchmark). */
  readonly pids: AudioTaps["pids"];
  /**
   * Puts the page tap in `page` (before it opens the meeting: its hooks must precede the page's
   * own code). Without it, or when it fails, listeners hear the recording's sink.
   */
  attachPage(page: Page): Promise<void>;
  /** Stops the audio (before PulseAudio goes); listeners stay attached for the last events. */
  stopAudio(): Promise<void>;
  /** Sends `end` to every listener (their WebSockets close with `notice.code`). */
  end(notice?: EndNotice): void;
  close(): Promise<void>;
}

const IN_CALL = new Set<SessionStatus>(["recording", "connected"]);

export function createListen(deps: ListenDeps): Listen {
  const log = deps.logger.child({ component: "listen" });
  let server: Promise<ListenServer> | null = null;
  let opened: ListenServer | null = null;
  let closed = false;
  const taps = new AudioTaps({
    pulseEnv: deps.pulseEnv,
    source: deps.source,
    fragmentMs: tapLatencyMs(deps.mic),
    ...(deps.lowLatency ? { idlePaceMs: IDLE_PACE_MS } : {}),
    logger: log,
    onFailure: () => void server?.then((s) => s.end({ code: CLOSE.internal, reason: CLOSE_REASON.tapFailed })),
  });
  const currentEvents = (): ListenEvent[] => {
    const status = deps.status();
    return status ? [{ type: "status", status }] : [];
  };

  const open = (): Promise<ListenServer> => {
    server ??= openListenServer({ workDir: deps.workDir, taps, logger: log, currentEvents }).then(
      (s) => (opened = s),
      (err: unknown) => {
        server = null;
        throw err;
      },
    );
    return server;
  };

  return {
    handles: (request) => isListenOp(request.op),
    async handle(request) {
      listenOpenArgsSchema.parse(request.args);
      if (closed) return { ok: false, error: { status: 409, message: "The session is ending." } };
      const status = deps.status();
      if (!status || !IN_CALL.has(status)) return { ok: false, error: { status: 409, message: `The bot is not in the call (status ${status ?? "starting"}).` } };
      const s = await open();
      return { ok: true, result: { socketPath: s.path } };
    },
    get pids() {
      return taps.pids;
    },
    async attachPage(page) {
      if (!pageTapEnabled(deps.mic)) return;
      try {
        const encoded = encodedPathEnabled() ? await EncodedReceiver.start(log) : null;
        await installPageTap(page.context(), encoded?.url ?? null);
        const tap = new PageTap({
          page,
          logger: log,
          encoded,
          onUncapturable: () => taps.fallBackToSink(),
          onActive: (active) => taps.pageTapActive(active),
          onReading: (reading) => taps.pageTapReading(reading),
          readTracks: pageTapReadsTracks(deps.mic),
        });
        await tap.bind();
        taps.usePageTap(tap);
      } catch (err) {
        log.warn({ err }, "listen: the page tap could not be put in the page; listeners will hear the sink");
      }
    },
    get listening() {
      return (opened?.connections ?? 0) > 0;
    },
    publish(event) {
      const parsed = listenEventSchema.safeParse(event);
      if (!parsed.success) {
        log.warn({ issues: parsed.error.issues.length }, "listen: dropped a malformed event");
        return;
      }
      void server?.then((s) => s.publish(parsed.data)).catch(() => undefined);
    },
    stopAudio: () => taps.stop(),
    end(notice = { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded }) {
      closed = true;
      void server?.then((s) => s.end(notice)).catch(() => undefined);
    },
    async close() {
      closed = true;
      await taps.stop();
      const s = await server?.catch(() => null);
      s?.end({ code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
      await s?.close();
    },
  };
}
