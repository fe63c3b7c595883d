/**
 * A real OAuth 2.1 / OpenID Connect authorization server for the tests: `oidc-provider` (an
 * OpenID-certified implementation) on 127.0.0.1, configured the way an organisation's IdP would
 * be for MCP — dynamic client registration, authorization code with PKCE, resource indicators
 * (RFC 8707) issuing JWT access tokens (RFC 9068) whose audience is the resource asked for.
 *
 * Consent is automated: the interaction route logs in whichever user the test named with
 * `signInAs` and grants exactly what was asked, so a real MCP client can run the whole flow
 * headless. `groups` is added to every access token, for policy rules on claims.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export interface TestIdp {
  issuer: string;
  provider: Provider;
  /** The user the next interaction signs in. */
  signInAs(user: string, groups?: string[]): void;
  /** Scope granted to every resource (the resource server's `scope`). */
  readonly resourceScopes: string;
  /** A machine client's token (client credentials grant) for `resource` with `scope`. */
  clientCredentialsToken(resource: string, scope: string): Promise<string>;
  /** A JWT signed with the IdP's own key and `kid`, with exactly `claims` (for tokens the IdP would not issue: expired, no `exp`). */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export interface TestIdpOptions {
  /** Space-separated scopes a resource server accepts; default `mcp:tools mcp:admin`. */
  resourceScopes?: string;
  /** Access token lifetime, seconds (or per resource); default 300. */
  accessTokenTtl?: number | ((resource: string) => number);
  /** More static clients beside `MACHINE_CLIENT` (oidc-provider client metadata). */
  clients?: ReadonlyArray<Record<string, unknown>>;
}

export const MACHINE_CLIENT = 'machine';
export const MACHINE_SECRET = 'machine-secret-for-tests-only';

export async function startTestIdp(options: TestIdpOptions = {}): Promise<TestIdp> {
  const resourceScopes = options.resourceScopes ?? 'mcp:tools mcp:admin';
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-idp-1' };
  const groupsOf = new Map<string, string[]>();
  let nextUser = 'alice';

  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    clients: [
      {
        client_id: MACHINE_CLIENT,
        client_secret: MACHINE_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
      ...(options.clients ?? []),
    ],
    cookies: { keys: ['portcullis-test-idp-cookie-key'] },
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', ...resourceScopes.split(' ')],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: resourceScopes,
          audience: resourceIndicator,
          accessTokenTTL: typeof options.accessTokenTtl === 'function' ? options.accessTokenTtl(resourceIndicator) : (options.accessTokenTtl ?? 300),
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    async findAccount(_ctx, id) {
      return { accountId: id, claims: async () => ({ sub: id }) };
    },
    extraTokenClaims: async (_ctx, token) => {
      const accountId = (token as { accountId?: string }).accountId;
      return accountId === undefined ? undefined : { groups: groupsOf.get(accountId) ?? [] };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { Interaction: 600, Session: 600, Grant: 600, AuthorizationCode: 60 },
  });
  // Plain http on loopback: oidc-provider would otherwise insist on TLS-terminated requests.
  provider.proxy = false;
  const callback = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params } = details;
    if (prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: nextUser } }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = details.session?.accountId ?? nextUser;
    const grant =
      details.grantId === undefined
        ? new provider.Grant({ accountId, clientId: String(params.client_id) })
        : ((await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId: String(params.client_id) }));
    const missing = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/') === true) {
      interaction(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    callback(req, res);
  });

  return {
    issuer,
    provider,
    resourceScopes,
    async clientCredentialsToken(resource, scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${MACHINE_CLIENT}:${MACHINE_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!response.ok || body.access_token === undefined) throw new Error(`client credentials grant failed: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-idp-1', typ: 'at+jwt' }).sign(privateKey),
    signInAs(user, groups = []) {
      nextUser = user;
      groupsOf.set(user, groups);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * What a browser does with an authorization URL against this IdP: follow its redirects, keeping
 * the IdP's cookies, until one points at `redirectUri`; answer that redirect's query (the
 * authorization code, `state` and `iss`).
 */
export async function followAuthorization(authorizationUrl: URL, redirectUri: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl.href;
  for (let hop = 0; hop < 12; hop++) {
    const response = await fetch(url, {
      redirect: 'manual',
      headers: cookies.size === 0 ? {} : { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (location === null) throw new Error(`authorization stopped at HTTP ${response.status} without a redirect`);
    const next = new URL(location, url);
    if (next.href.startsWith(redirectUri)) return next.searchParams;
    url = next.href;
  }
  throw new Error('authorization did not reach the redirect URI');
}
