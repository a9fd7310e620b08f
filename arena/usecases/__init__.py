"""Write use cases: each records facts (markets, prices, resolutions, cohorts, decisions, fills, snapshots) in one
transaction, idempotent on natural keys. Jobs and the CLI are thin wiring over these functions.

Must not import the read side (`arena.read`), the caches (`arena.cache`) or the web (`arena.web`).
"""
