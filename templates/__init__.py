"""The site templates, the decision prompts (prompts/) and the static assets, installed as `arena._templates`
(package data read with importlib.resources; see pyproject.toml)."""
