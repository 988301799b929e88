/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests: a route is
 * registered here by the same call that mounts it (route.ts), so none can be undocumented.
 */
import { z } from "zod";

export interface DocumentedRoute {
  method: "get" | "post" | "put" | "delete";
  /** Full path in Express notation (`/status/:session_id`). */
  path: string;
  summary: string;
  tag: string;
  security?: "bearer" | "botToken";
  body?: z.ZodType;
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
        responses: Object.fromEntries(
          Object.entries(r.responses).map(([status, res]) => [
            status,
            res.schema ? { description: res.description, content: { "application/json": { schema: jsonSchema(res.schema, "output") } } } : { description: res.description },
          ]),
        ),
      };
      if (r.body) {
        operation.requestBody = { required: true, content: { [r.bodyContentType ?? "application/json"]: { schema: jsonSchema(r.body, "input") } } };
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
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token issued locally or by the external identity provider" },
          botToken: { type: "http", scheme: "bearer", description: "BOT_ACCESS_TOKEN" },
        },
      },
    };
  }
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
