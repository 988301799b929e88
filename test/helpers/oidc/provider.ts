/**
 * A real OpenID provider (panva's oidc-provider) on loopback, issuing JWT access tokens through
 * the client-credentials grant (RFC 6749 4.4) for the audience given, with roles in a
 * Keycloak-style `realm_access.roles` claim per client. Proves the bearer pipeline against a
 * provider we did not write: its discovery document, its JWKS, its `at+jwt` tokens.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export interface TestOidcProvider {
  url: string;
  /** An access token for a client (client-credentials grant); its `sub` is the client id. */
  tokenFor(clientId: string): Promise<string>;
  close(): Promise<void>;
}

export interface ProviderClient {
  id: string;
  roles: string[];
}

const secretOf = (id: string) => `${id}-secret-for-tests-only-0123456789`;

export async function startOidcProvider(options: { audience: string; clients: ProviderClient[] }): Promise<TestOidcProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const roles = new Map(options.clients.map((c) => [c.id, c.roles]));
  const provider = new Provider(url, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "provider-rsa", alg: "RS256", use: "sig" }] },
    clients: options.clients.map((c) => ({ client_id: c.id, client_secret: secretOf(c.id), grant_types: ["client_credentials"], redirect_uris: [], response_types: [] })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => "urn:toa:api",
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: "api", audience: options.audience, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } }),
      },
    },
    ttl: { ClientCredentials: 600 },
    extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => ({ realm_access: { roles: roles.get(token.clientId ?? "") ?? [] } }),
  });
  server.on("request", provider.callback());
  return {
    url,
    async tokenFor(clientId) {
      const res = await fetch(`${url}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${clientId}:${secretOf(clientId)}`).toString("base64")}`,
        },
        body: "grant_type=client_credentials&scope=api",
      });
      const body = (await res.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`token request for ${clientId} failed: ${res.status} ${body.error ?? ""}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
