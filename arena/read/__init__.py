"""The read side: stored facts read into the pure scoring library — boards, standings, statistics, model pages'
analyses, exports — as of a time. Never records a fact; its only writes are cache entries (`arena.cache`).

Must not import the write use cases' writers, the operations machinery or the web.
"""
