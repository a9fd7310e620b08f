"""The package list for setuptools (everything else is in pyproject.toml): the packages under arena/ plus the
three repo folders that pyproject's package-dir maps into the `arena` namespace when installed."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["arena", "arena.*"]) + ["arena.jobs", "arena._templates", "arena._migrations"])
