/** The bearer pipeline and its policies, for the auth routes and for host applications. */
export { requireBearer } from "./require-bearer.ts";
export { requireAdmin, requireTwoFactor, requireFreshSecondFactor, isFresh, POLICY } from "./policies.ts";
export { principalOf, type Principal } from "./principal.ts";
export { bearerValidator, type BearerContext, type BearerValidator } from "./validator.ts";
export { localAudience } from "./local-verifier.ts";
