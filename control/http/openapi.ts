/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests: a route is
 * registered here by the same call that mounts it (route.ts), so none can be undocumented.
 */
import { z } from "zod";
import { ERRORS, type ErrorFamily } from "./errors.ts";

export interface DocumentedRoute {
  method: "get" | "post" | "put" | "delete";
  /** Full path in Express notation (`/status/:session_id`). */
  path: string;
  summary: string;
  tag: string;
  security?: "bearer" | "botToken";
  /** Whose error bodies a refusal has (errors.ts), for the documented 4xx/5xx schemas. */
  family?: ErrorFamily;
  body?: z.ZodType;
  /**
   * What the document shows for the body when the validating schema cannot say it: a multipart
   * form's file part and its text fields' real types (they arrive as text and are coerced).
   */
  bodyDoc?: z.ZodType;
  bodyContentType?: string;
  query?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

export class OpenApiRegistry {
  readonly routes: DocumentedRoute[] = [];

  add(route: DocumentedRoute): void {
    this.routes.push(route);
  }

  document(info: { title: string; version: string; description?: string }): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const r of this.routes) {
      const path = r.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      const params = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
        name: m[1],
        in: "path",
        required: true,
        schema: { type: "string" },
      }));
      const query = r.query ? queryParameters(r.query) : [];
      const operation: Record<string, unknown> = {
        summary: r.summary,
        tags: [r.tag],
        parameters: [...params, ...query],
        responses: Object.fromEntries(Object.entries(r.responses).map(([status, res]) => [status, response(Number(status), res, r.family)])),
      };
      const body = r.bodyDoc ?? r.body;
      if (body) {
        // A body the schema accepts absent (`POST /audio/{id}/listen` with none) is optional.
        const required = !r.body?.safeParse(undefined).success;
        operation.requestBody = { required, content: { [r.bodyContentType ?? "application/json"]: { schema: jsonSchema(body, "input") } } };
      } else if (r.bodyContentType) {
        operation.requestBody = { required: true, content: { [r.bodyContentType]: { schema: { type: "string", format: "binary" } } } };
      }
      if (r.security) operation.security = [{ [r.security]: [] }];
      (paths[path] ??= {})[r.method] = operation;
    }
    return {
      openapi: "3.1.0",
      info,
      paths,
      components: {
        schemas: ERROR_SCHEMAS,
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token issued locally or by the external identity provider" },
          botToken: { type: "http", scheme: "bearer", description: "BOT_ACCESS_TOKEN" },
        },
      },
    };
  }
}

/** The error bodies of both families (errors.ts), referenced by every refusal. */
const ERROR_SCHEMAS = {
  Detail: { type: "object", required: ["detail"], properties: { detail: { type: "string" } } },
  ValidationError: {
    type: "object",
    required: ["detail"],
    properties: {
      detail: {
        type: "array",
        items: {
          type: "object",
          required: ["loc", "msg", "type"],
          properties: { loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } }, msg: { type: "string" }, type: { type: "string" } },
        },
      },
    },
  },
  Errors: { type: "object", required: ["errors"], properties: { errors: { type: "array", items: { type: "string" } } } },
  OAuthError: { type: "object", required: ["error", "error_description"], properties: { error: { type: "string" }, error_description: { type: "string" } } },
} as const;

const RETRY_AFTER = { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer", minimum: 1 } } };

function response(status: number, res: { description: string; schema?: z.ZodType }, family: ErrorFamily | undefined): Record<string, unknown> {
  if (res.schema) return { description: res.description, content: { "application/json": { schema: jsonSchema(res.schema, "output") } } };
  if (status < 400 || !family) return { description: res.description };
  const out: Record<string, unknown> = { description: res.description, content: { "application/json": { schema: { $ref: `#/components/schemas/${errorSchemaName(status, family)}` } } } };
  if (status === 429 || (status === 503 && family === "bot")) out.headers = RETRY_AFTER;
  return out;
}

/** The body a refusal of this status has in this family: the catalogue's entry decides. */
function errorSchemaName(status: number, family: ErrorFamily): keyof typeof ERROR_SCHEMAS {
  if (family === "bot") return status === 422 ? "ValidationError" : "Detail";
  const entry = Object.values(ERRORS).find((e) => e.status === status);
  return entry?.auth.kind === "oauth" ? "OAuthError" : "Errors";
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const js = jsonSchema(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({ name, in: "query", required: js.required?.includes(name) ?? false, schema: s }));
}
