"""The site's vendored assets — a small stylesheet and a small table sort/filter script, kept as files under
templates/static/ — so the site needs nothing from a network; `STATIC` maps each file name under static/ to its
content type and text.
"""

from __future__ import annotations

from arena.web.env import TEMPLATES

SITE_CSS = (TEMPLATES / "static" / "site.css").read_text(encoding="utf-8")
SORT_JS = (TEMPLATES / "static" / "sort.js").read_text(encoding="utf-8")

STATIC = {"site.css": ("text/css; charset=utf-8", SITE_CSS), "sort.js": ("text/javascript; charset=utf-8", SORT_JS)}
