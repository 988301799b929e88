/**
 * A setting a benchmark may A/B through the environment (never a configuration key): the
 * positive integer in `env[name]`, else `fallback`. The worker inherits the variable from the
 * bench's control plane, so both sides read the same value.
 */
export function benchOverride(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
