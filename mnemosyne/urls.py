from django.contrib import admin
from django.urls import path

from mcp_server.oauth import consent

urlpatterns = [
    path("admin/", admin.site.urls),
    # OAuth sign-in (MCP_OAUTH=builtin; without it no client is ever sent here).
    path("oauth/login/", consent.SignIn.as_view(), name="oauth-login"),
    path("oauth/consent/", consent.consent, name="oauth-consent"),
]
