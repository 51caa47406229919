"""The Django project's shell: settings and what they read (the environment, the local settings
file, the database URL and the embedded PostgreSQL), the ASGI app with its URLs, and WSGI."""
