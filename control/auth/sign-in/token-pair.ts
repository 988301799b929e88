/**
 * The sign-in response body (login-service.md "Token pair"): RFC 6749 snake_case names, and the
 * fields clients branch on always present (`null`, never omitted).
 */
import { z } from "zod";

export interface TokenPairBody {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: "Bearer";
  /** `true` or `null`, never `false`. */
  recovery_codes_running_low: true | null;
  device_token: string | null;
  device_expires_in: number | null;
}

export const tokenPairSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_in: z.number().int(),
  token_type: z.literal("Bearer"),
  recovery_codes_running_low: z.literal(true).nullable(),
  device_token: z.string().nullable(),
  device_expires_in: z.number().int().nullable(),
});
