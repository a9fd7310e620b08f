"""The web site: page contexts built from the database, Jinja templates, a static renderer and a live server.

`render.render_site` writes the static site; `serve.serve` serves the same pages from the database. Imports
the store and services (read-only); nothing in `domain/` or `scoring/` may import this package.
"""
