"""The SDK's OAuthAuthorizationServerProvider, on Django models (clients.py, grants.py): the SDK's
handlers validate requests (PKCE S256, redirect URIs, scopes, expiry); this decides and stores."""

from __future__ import annotations

from django.core import signing
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from access import oauth_bearer, tokens
from access.oauth import clients, config, grants
from mnemosyne.lib import blocking

CONSENT_SALT = "mnemosyne.oauth.consent"
CONSENT_PATH = "/oauth/consent/"


class DjangoProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return await blocking.run(clients.find, client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        try:
            await blocking.run(clients.register, client_info)
        except ValueError as exc:
            raise RegistrationError("invalid_redirect_uri", str(exc)) from None

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Send the user to sign in and consent (consent.py), carrying the request signed."""
        if params.resource is not None and not oauth_bearer.is_this_resource(params.resource):
            raise AuthorizeError(
                "invalid_target", f"this server issues tokens only for {oauth_bearer.resource()}"
            )
        scopes = params.scopes or (client.scope.split() if client.scope else list(config.SCOPES))
        unknown = sorted(set(scopes) - set(config.SCOPES))
        if unknown:
            raise AuthorizeError("invalid_scope", f"unknown scopes: {', '.join(unknown)}")
        request = {
            "client_id": client.client_id,
            "scopes": scopes,
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "code_challenge": params.code_challenge,
            "state": params.state,
            "resource": oauth_bearer.resource(),
        }
        return oauth_bearer.issuer() + CONSENT_PATH + "?request=" + signing.dumps(request, salt=CONSENT_SALT)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        row = await blocking.run(grants.find_code, client.client_id, authorization_code)
        if row is None:
            return None
        return AuthorizationCode(
            code=authorization_code,
            scopes=row.grant.scopes,
            expires_at=row.expires_at.timestamp(),
            client_id=client.client_id,
            code_challenge=row.code_challenge,
            redirect_uri=row.redirect_uri,  # type: ignore[arg-type]  # pydantic parses it
            redirect_uri_provided_explicitly=row.redirect_uri_provided_explicitly,
            resource=row.grant.resource,
            subject=str(row.grant.user_id),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        issued = await blocking.run(grants.exchange_code, tokens.digest(authorization_code.code))
        if issued is None:
            raise TokenError("invalid_grant", "authorization code has already been used")
        return issued

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        row = await blocking.run(grants.find_refresh, client.client_id, refresh_token)
        if row is None:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=client.client_id,
            scopes=row.scopes,
            expires_at=grants.expires_at(row),
            resource=row.grant.resource,
            subject=str(row.grant.user_id),
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        row = await blocking.run(grants.find_refresh, client.client_id, refresh_token.token)
        issued = await blocking.run(grants.refresh, row, scopes) if row is not None else None
        if issued is None:
            raise TokenError("invalid_grant", "refresh token has already been used")
        return issued

    async def load_access_token(self, token: str) -> AccessToken | None:
        row = await blocking.run(grants.find_token, token)
        if row is None or row.kind != row.Kind.ACCESS or row.retired_at is not None or row.grant.is_revoked:
            return None
        return AccessToken(
            token=token,
            client_id=row.grant.client.client_id,
            scopes=row.scopes,
            expires_at=grants.expires_at(row),
            resource=row.grant.resource,
            subject=str(row.grant.user_id),
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """Revoking either token of a sign-in ends the sign-in: its grant and all its tokens."""
        row = await blocking.run(grants.find_token, token.token)
        if row is not None:
            await blocking.run(grants.revoke_grant, row.grant)
