/** The client handed to `$transaction` callbacks, so helpers run inside a caller's transaction. */
import type { Db } from "../../db/client.ts";

export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
