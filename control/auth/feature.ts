/**
 * The identity service as one feature: builds the AuthContext once and mounts every route module
 * under `LocalLogin:EndpointPrefix` in this one place (conventions 1). Each route module is added
 * with one line in `mountRoutes` below.
 */
import { clusterSettings } from "../cluster/settings.ts";
import { Router } from "express";
import { ConfigError } from "../config/index.ts";
import type { Feature, FeatureContext, MountedFeature } from "../app/feature.ts";
import type { AuditEvent } from "../app/host.ts";
import type { MountedRouter } from "../http/route.ts";
import { startSweep } from "./cleanup/sweep.ts";
import type { AuthContext } from "./context.ts";
import { createBackgroundQueue, type BackgroundQueue } from "./passwords/background-queue.ts";
import { createPbkdf2Hasher, pbkdf2Settings } from "./passwords/pbkdf2.ts";
import { forgotRoutes } from "./routes/forgot.ts";
import { loginRoutes } from "./routes/login.ts";
import { logoutRoutes } from "./routes/logout.ts";
import { passwordRoutes } from "./routes/password.ts";
import { noStore } from "./routes/no-store.ts";
import { normalisePrefix } from "./routes/prefix.ts";
import { refreshRoutes } from "./routes/refresh.ts";
import { registerRoutes } from "./routes/register.ts";
import { resetRoutes } from "./routes/reset.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { signingKeysFor, type SigningKeySet } from "./tokens/keys.ts";
import { refreshStoreFor, type RefreshStore } from "./tokens/refresh-store.ts";
import { sessionStoreFor } from "./tokens/session-store.ts";
import { signInStoreFor } from "./sign-in/sign-in-store.ts";
import { resolveHooks } from "./hooks/index.ts";
import { jwksRoute } from "./routes/jwks.ts";
import { twoFactorRoutes } from "./routes/twofactor.ts";
import { deviceRoutes } from "./routes/devices.ts";
import { passkeyRoutes } from "./routes/passkeys.ts";
import { emailRoutes } from "./routes/email.ts";
import { magicLinkRoutes } from "./routes/magic-link.ts";
import { adminUserRoutes } from "./routes/admin-users.ts";
import { invitationRoutes } from "./routes/invitations.ts";
import { resealTotpSecrets } from "./twofactor/secret-rotation.ts";

/** What every route module receives. */
export interface AuthRouteDeps {
  ctx: AuthContext;
  /** Router mounted at `ctx.prefix`; pass to mountRoute. */
  target: MountedRouter;
  /** Work that runs after the response (reset and magic-link mail). */
  background: BackgroundQueue;
  keys: SigningKeySet;
  /** The refresh hot path's storage, on the driver under Prisma (tokens/refresh-store.ts). */
  refreshStore: RefreshStore;
  router: Router;
  registry: FeatureContext["registry"];
}

export function buildAuthContext(feature: FeatureContext): AuthContext {
  const { config, logger, database, host, now } = feature;
  return {
    config,
    db: database.db,
    provider: database.provider,
    sessions: sessionStoreFor(database.driver),
    signIn: signInStoreFor(database.driver),
    logger,
    now,
    hooks: host.hooks,
    hasher: host.passwordHasher ?? createPbkdf2Hasher(pbkdf2Settings(config)),
    roleProvider: host.roleProvider,
    audit(event: AuditEvent) {
      logger.info(event);
      try {
        host.onAudit?.(event);
      } catch (error) {
        logger.error({ err: error, audit: event.audit }, "the host's onAudit callback threw");
      }
    },
    prefix: normalisePrefix(config.LocalLogin.EndpointPrefix),
  };
}

/** Startup checks that depend on the registered hooks (login-service.md "What the service does"). */
export function checkHooks(ctx: AuthContext): void {
  if (!ctx.hooks.passwordReset) {
    throw new ConfigError(
      "Mail:Transport",
      "local login needs a password-reset delivery hook: set Mail:Transport to smtp or file, or Hooks:Module to a module exporting passwordReset (or pass hooks.passwordReset to the factory), or set LocalLogin:Enabled to false",
    );
  }
  if (ctx.config.LocalLogin.RequireVerifiedEmailForPasswordReset && !ctx.hooks.emailVerification) {
    throw new ConfigError(
      "LocalLogin:RequireVerifiedEmailForPasswordReset",
      "needs an email-verification hook so addresses can be verified: register emailVerification (Mail:Hooks, Hooks:Module) or turn this setting off",
    );
  }
}

export const authFeature: Feature = {
  name: "auth",
  async mount(feature): Promise<MountedFeature> {
    if (!feature.config.LocalLogin.Enabled) return {};
    const ctx = buildAuthContext(feature);
    // Cluster mode (#19): one rate-limit budget for every instance, counted in PostgreSQL.
    const sharedLimits = clusterSettings(feature.config)
      ? await (await import("../cluster/rate-limit-store.ts")).sharedRateLimitStore(feature.config.server.DATABASE_URL, feature.logger)
      : null;
    ctx.rateLimitStore = sharedLimits?.store;
    ctx.hooks = await resolveHooks(feature.config, feature.host.hooks, feature.logger, { now: feature.now });
    checkHooks(ctx);
    if (feature.config.TwoFactor.Enabled) await resealTotpSecrets(ctx);
    // Loaded now so a bad key fails startup (ConfigError naming the entry), not the first login.
    const keys = await signingKeysFor(feature.config);
    const router = Router();
    // Every auth response is about a credential or a person: never stored by a cache.
    router.use(noStore);
    const background = createBackgroundQueue(ctx.logger);
    const registry = feature.registry;
    const refreshStore = refreshStoreFor(feature.database.driver);
    mountRoutes({ ctx, target: { router, prefix: ctx.prefix, registry }, background, keys, refreshStore, router, registry });
    sharedLimits?.watch();
    feature.app.use(ctx.prefix || "/", router);
    const stopSweep = startSweep(ctx);
    return {
      async close() {
        await stopSweep();
        await background.drain();
        await sharedLimits?.close();
      },
    };
  },
};

function mountRoutes(deps: AuthRouteDeps): void {
  loginRoutes(deps);
  refreshRoutes(deps);
  logoutRoutes(deps);
  sessionRoutes(deps);
  registerRoutes(deps);
  passwordRoutes(deps);
  forgotRoutes(deps);
  resetRoutes(deps);
  jwksRoute(deps);
  twoFactorRoutes(deps);
  deviceRoutes(deps);
  passkeyRoutes(deps);
  emailRoutes(deps);
  magicLinkRoutes(deps);
  adminUserRoutes(deps);
  invitationRoutes(deps);
}
