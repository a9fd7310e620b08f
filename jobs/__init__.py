"""Scheduled jobs: thin wiring from APScheduler 3 to the arena's services, one module per job."""
