/**
 * How the worker's `parec`s read its PulseAudio daemon (a listen tap, the sink pacer, the silence
 * watcher): raw s16le of a source, with the fragment they ask for, named, and with the daemon's
 * socket on the command line.
 */

/** A raw s16le `parec` of `source` in `format` with a `fragmentMs` fragment, named `stream`. */
export function parecArgs(options: {
  pulseEnv: Record<string, string>;
  source: string;
  format: { sampleRate: number; channels: number };
  fragmentMs: number;
  stream: string;
  /** PulseAudio's client name (`pactl list`); "bot-listen" unless said. */
  client?: string;
}): string[] {
  return [
    "--raw",
    "--format=s16le",
    `--rate=${options.format.sampleRate}`,
    `--channels=${options.format.channels}`,
    `--latency-msec=${options.fragmentMs}`,
    `--device=${options.source}`,
    `--client-name=${options.client ?? "bot-listen"}`,
    `--stream-name=${options.stream}`,
    // The daemon's socket lies in the session's work dir: on the command line, it lets the
    // supervisor's sweep of a dead worker's processes (orphans.ts) find the parec too.
    ...(options.pulseEnv.PULSE_SERVER ? [`--server=${options.pulseEnv.PULSE_SERVER}`] : []),
  ];
}

/** What a parec runs with: PulseAudio's socket, messages in English (exit verdicts read them). */
export function parecEnv(pulseEnv: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", ...pulseEnv };
}
