"""Services: the arena's use cases (ingest, cohorts, decide, mark, settle, score), each one transaction deep.

Jobs and the CLI are thin wiring over these functions; every one of them is idempotent on natural keys.
"""
