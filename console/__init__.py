"""The console at /console/: what a person sees of the libraries, their items and chunks, and any
citation opened at its passage.

Server-rendered Django templates, htmx (django-htmx's copy, served from this server) for partial
updates, no build step and nothing from elsewhere: the pages run under the project's strict
Content-Security-Policy (no inline script or style; boxes over a page are SVG attributes). Every
view is decided by the one place that decides (access/decision.py) as the signed-in
person's principal, transport "console": a library, collection, item or chunk they may not see is a
404, worded as an unknown one.
"""
