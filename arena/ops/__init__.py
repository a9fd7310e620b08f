"""Operations machinery: job runs claimed once per period, leases and their takeover, the decision queue, worker
processes, endpoint slots, backups and snapshot compaction — how the use cases are run, not what they record.

Must not import the read side (`arena.read`), the caches (`arena.cache`) or the web (`arena.web`).
"""
