"""The access models, taken over from mcp_server (whose migrations 0001-0009 created their tables and
0010 let them go): added to the migration state only, on the tables as they are (each model's
db_table keeps its mcp_server_* name). Their content types move with them, so that permissions
given on them and the admin's history of their rows stay theirs."""

from typing import Any

import access.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


MOVED = (
    "accesspolicystate",
    "librarygrant",
    "mcpapprovalrequest",
    "mcpauditevent",
    "mcpnonce",
    "mcpratewindow",
    "mcpthrottlewindow",
    "mcptoken",
    "oauthclient",
    "oauthcode",
    "oauthgrant",
    "oauthtoken",
    "oidcidentity",
    "signingroup",
)


def _relabel(apps: Any, source: str, target: str) -> None:
    content_types = apps.get_model("contenttypes", "ContentType")
    if content_types.objects.filter(app_label=target, model__in=MOVED).exists():
        return  # already there (a database that ran this before, then went back and forth)
    content_types.objects.filter(app_label=source, model__in=MOVED).update(app_label=target)


def content_types_to_access(apps: Any, schema_editor: Any) -> None:
    _relabel(apps, "mcp_server", "access")


def content_types_to_mcp_server(apps: Any, schema_editor: Any) -> None:
    _relabel(apps, "access", "mcp_server")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("mcp_server", "0010_models_moved_to_access"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("library", "0019_alter_library_library_type"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AccessPolicyState",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("policy", models.CharField(max_length=16)),
                        ("changed_at", models.DateTimeField(auto_now=True)),
                        ("changed_by", models.CharField(blank=True, default="", max_length=150)),
                    ],
                    options={
                        "db_table": "mcp_server_accesspolicystate",
                    },
                ),
                migrations.CreateModel(
                    name="OAuthClient",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("client_id", models.CharField(max_length=2000, unique=True)),
                        ("name", models.CharField(blank=True, max_length=200)),
                        ("information", models.JSONField(default=dict)),
                        ("from_metadata_document", models.BooleanField(default=False)),
                        ("fetched_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "verbose_name": "OAuth client",
                        "db_table": "mcp_server_oauthclient",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="MCPThrottleWindow",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("key", models.CharField(max_length=200)),
                        ("window_start", models.DateTimeField()),
                        ("count", models.PositiveIntegerField(default=0)),
                    ],
                    options={
                        "db_table": "mcp_server_mcpthrottlewindow",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("key", "window_start"), name="mcp_throttle_window_unique"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="MCPToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=100)),
                        ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                        (
                            "prefix",
                            models.CharField(
                                editable=False, help_text="The token's first characters.", max_length=16
                            ),
                        ),
                        ("allowed_tools", models.JSONField(blank=True, default=list)),
                        ("scopes", models.JSONField(blank=True, default=access.models.default_scopes)),
                        (
                            "rate_limit_per_minute",
                            models.PositiveIntegerField(
                                blank=True,
                                help_text="Calls per minute across all workers; empty means no limit.",
                                null=True,
                            ),
                        ),
                        (
                            "created_by",
                            models.CharField(blank=True, default="", editable=False, max_length=150),
                        ),
                        (
                            "sign_results",
                            models.BooleanField(
                                default=False,
                                help_text="Results carry an HMAC-SHA256 signature keyed by the token's digest.",
                            ),
                        ),
                        ("expires_at", models.DateTimeField(blank=True, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        ("last_used_at", models.DateTimeField(blank=True, editable=False, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "libraries",
                            models.ManyToManyField(blank=True, related_name="+", to="library.library"),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="mcp_tokens",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "MCP token",
                        "db_table": "mcp_server_mcptoken",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="MCPRateWindow",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("window_start", models.DateTimeField()),
                        ("count", models.PositiveIntegerField(default=0)),
                        (
                            "token",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="access.mcptoken",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "mcp_server_mcpratewindow",
                    },
                ),
                migrations.CreateModel(
                    name="MCPNonce",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("nonce", models.CharField(max_length=128)),
                        ("seen_at", models.DateTimeField()),
                        (
                            "token",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="access.mcptoken",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "mcp_server_mcpnonce",
                    },
                ),
                migrations.CreateModel(
                    name="MCPAuditEvent",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("token_created", "Token created"),
                                    ("token_revoked", "Token revoked"),
                                    ("token_extended", "Token extended"),
                                    ("write_tool_call", "Write tool call"),
                                    ("grant_given", "Library grant given or changed"),
                                    ("grant_revoked", "Library grant revoked"),
                                    ("sign_in", "Signed in"),
                                    ("sign_in_failed", "Sign-in failed"),
                                    ("policy_switched", "Library access policy switched"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "actor",
                            models.CharField(help_text="Who did it: a username or 'system'.", max_length=150),
                        ),
                        (
                            "address",
                            models.CharField(
                                blank=True,
                                default="",
                                help_text="From where: the client's address, when known.",
                                max_length=64,
                            ),
                        ),
                        ("detail", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "token",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="audit_events",
                                to="access.mcptoken",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "MCP audit event",
                        "db_table": "mcp_server_mcpauditevent",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="MCPApprovalRequest",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "uid",
                            models.CharField(
                                default=access.models.new_approval_uid,
                                editable=False,
                                max_length=32,
                                unique=True,
                            ),
                        ),
                        ("subject", models.TextField(blank=True, default="")),
                        ("tool", models.CharField(max_length=100)),
                        ("arguments_digest", models.CharField(max_length=64)),
                        ("arguments_preview", models.TextField(blank=True)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("approved", "Approved"),
                                    ("rejected", "Rejected"),
                                    ("used", "Used"),
                                ],
                                default="pending",
                                max_length=16,
                            ),
                        ),
                        ("decided_by", models.CharField(blank=True, max_length=150)),
                        ("decided_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "token",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="approvals",
                                to="access.mcptoken",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "MCP approval request",
                        "db_table": "mcp_server_mcpapprovalrequest",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="OAuthGrant",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("scopes", models.JSONField(default=list)),
                        ("resource", models.CharField(max_length=2000)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        ("last_used_at", models.DateTimeField(blank=True, editable=False, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "client",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="grants",
                                to="access.oauthclient",
                            ),
                        ),
                        (
                            "libraries",
                            models.ManyToManyField(blank=True, related_name="+", to="library.library"),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="oauth_grants",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "OAuth grant",
                        "db_table": "mcp_server_oauthgrant",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="OAuthCode",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("digest", models.CharField(max_length=64, unique=True)),
                        ("code_challenge", models.CharField(max_length=128)),
                        ("redirect_uri", models.TextField()),
                        ("redirect_uri_provided_explicitly", models.BooleanField(default=True)),
                        ("expires_at", models.DateTimeField()),
                        ("used_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "grant",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="codes",
                                to="access.oauthgrant",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "mcp_server_oauthcode",
                    },
                ),
                migrations.CreateModel(
                    name="OAuthToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("digest", models.CharField(max_length=64, unique=True)),
                        (
                            "kind",
                            models.CharField(
                                choices=[("access", "Access"), ("refresh", "Refresh")], max_length=8
                            ),
                        ),
                        ("scopes", models.JSONField(default=list)),
                        ("expires_at", models.DateTimeField()),
                        ("retired_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "grant",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="tokens",
                                to="access.oauthgrant",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "mcp_server_oauthtoken",
                    },
                ),
                migrations.CreateModel(
                    name="OIDCIdentity",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("issuer", models.CharField(max_length=500)),
                        ("subject", models.CharField(max_length=255)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="oidc_identities",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "OIDC identity",
                        "verbose_name_plural": "OIDC identities",
                        "db_table": "mcp_server_oidcidentity",
                    },
                ),
                migrations.CreateModel(
                    name="SignInGroup",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "group",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="sign_in",
                                to="auth.group",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "mcp_server_signingroup",
                    },
                ),
                migrations.CreateModel(
                    name="LibraryGrant",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "role",
                            models.CharField(
                                choices=[
                                    ("reader", "Reader (search, read, list)"),
                                    ("editor", "Editor (also add, change, delete and ingest)"),
                                    ("manager", "Manager (also grant roles on the library)"),
                                ],
                                max_length=16,
                            ),
                        ),
                        (
                            "granted_by",
                            models.CharField(blank=True, default="", editable=False, max_length=150),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "group",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="library_grants",
                                to="auth.group",
                            ),
                        ),
                        (
                            "library",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="grants",
                                to="library.library",
                            ),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="library_grants",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "mcp_server_librarygrant",
                        "ordering": ["library__name", "role"],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(
                                    models.Q(("group__isnull", True), ("user__isnull", False)),
                                    models.Q(("group__isnull", False), ("user__isnull", True)),
                                    _connector="OR",
                                ),
                                name="library_grant_user_or_group",
                            ),
                            models.UniqueConstraint(
                                fields=("library", "user"), name="library_grant_one_per_user"
                            ),
                            models.UniqueConstraint(
                                fields=("library", "group"), name="library_grant_one_per_group"
                            ),
                        ],
                    },
                ),
                migrations.AddConstraint(
                    model_name="mcptoken",
                    constraint=models.UniqueConstraint(
                        fields=("user", "name"), name="mcp_token_name_unique_per_user"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="mcpratewindow",
                    constraint=models.UniqueConstraint(
                        fields=("token", "window_start"), name="mcp_rate_window_unique"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="mcpnonce",
                    constraint=models.UniqueConstraint(
                        fields=("token", "nonce"), name="mcp_nonce_unique_per_token"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="oidcidentity",
                    constraint=models.UniqueConstraint(
                        fields=("issuer", "subject"), name="oidc_identity_unique"
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_access, content_types_to_mcp_server),
    ]
