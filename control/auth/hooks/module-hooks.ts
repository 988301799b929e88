/**
 * `Hooks:Module`: an ES module exporting hooks by name (`passwordReset`, `emailVerification`,
 * `magicLink`, `adminPasswordIssued`, `invitation`; named exports or the same names on the
 * default export). A path is resolved against the working directory.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../../config/index.ts";
import type { DeliveryHooks } from "../../app/host.ts";
import { HOOK_NAMES } from "./kinds.ts";

export async function loadHookModule(specifier: string): Promise<DeliveryHooks> {
  const url = isAbsolute(specifier) || specifier.startsWith(".") ? pathToFileURL(resolve(specifier)).href : specifier;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError("Hooks:Module", `cannot load ${specifier} (${(error as Error).message}): give the path of an ES module exporting the hooks`);
  }
  const fallback = typeof mod.default === "object" && mod.default !== null ? (mod.default as Record<string, unknown>) : {};
  const hooks: DeliveryHooks = {};
  for (const name of HOOK_NAMES) {
    const hook = mod[name] ?? fallback[name];
    if (hook === undefined) continue;
    if (typeof hook !== "function") throw new ConfigError("Hooks:Module", `${specifier} exports ${name} but it is not a function`);
    hooks[name] = hook as DeliveryHooks[typeof name];
  }
  if (Object.keys(hooks).length === 0) {
    throw new ConfigError("Hooks:Module", `${specifier} exports none of ${HOOK_NAMES.join(", ")}`);
  }
  return hooks;
}
