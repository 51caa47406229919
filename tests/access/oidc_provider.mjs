// A real OpenID Connect provider for the single sign-on tests: panva's oidc-provider (OpenID
// Certified), with its built-in development login (any password) and consent pages.
//
//   node oidc_provider.mjs PORT CONFIG.json
//
// CONFIG.json: {"clients": [...], "accounts": {"alice": {"email": ..., "groups": [...]}}, "jwks": {...}}.
// Accounts are read again at every sign-in, so a test can change someone's groups in between.
import fs from "node:fs";
import Provider from "oidc-provider";

const [port, configPath] = process.argv.slice(2);
const read = () => JSON.parse(fs.readFileSync(configPath, "utf8"));
const config = read();

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: config.clients,
  jwks: config.jwks,
  cookies: { keys: ["single-sign-on-tests"] },
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["preferred_username", "name"],
    groups: ["groups"],
  },
  scopes: ["openid", "email", "profile", "groups"],
  // Claims asked for by scope go into the ID token itself, as Keycloak and Entra ID can be set to do.
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, id) {
    const account = read().accounts[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        const now = read().accounts[id] || {};
        return {
          sub: id,
          preferred_username: id,
          name: id,
          email: now.email || `${id}@example.org`,
          email_verified: true,
          groups: now.groups,
        };
      },
    };
  },
});
provider.listen(Number(port), "127.0.0.1", () => console.log(`listening on ${port}`));
