from django.contrib import admin
from django.urls import include, path

from access import single_sign_on
from access.oauth import consent

urlpatterns = [
    path("admin/", admin.site.urls),
    # The console: libraries, items, chunks and citations as a person sees them (console/).
    path("console/", include("console.urls")),
    # OAuth sign-in (MCP_OAUTH=builtin; without it no client is ever sent here).
    path("oauth/login/", consent.SignIn.as_view(), name="oauth-login"),
    path("oauth/consent/", consent.consent, name="oauth-consent"),
    # Single sign-on with an OpenID Connect provider (OIDC_ISSUER; 404 without it).
    path("oidc/login/", single_sign_on.begin, name="oidc-login"),
    path("oidc/callback/", single_sign_on.callback, name="oidc-callback"),
]
