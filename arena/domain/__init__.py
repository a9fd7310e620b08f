"""The pure trading domain: markets, fills, the ledger fold, valuation, settlement, sizing and the broker.

Nothing under domain/ imports httpx, sqlmodel, jinja2 or apscheduler, or reads the wall clock.
"""
