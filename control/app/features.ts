/**
 * Every feature of the product, in mount order. A feature module exports one `Feature`; add it
 * here (one line) to put it into the server.
 */
import type { Feature } from "./feature.ts";
import { authFeature } from "../auth/feature.ts";
import { botFeature } from "../bot/feature.ts";

export const FEATURES: Feature[] = [authFeature, botFeature];
