"""Caches of the read side: results computed from stored facts, kept under a key of what they were computed from.
A cache entry is never a fact; emptying every cache changes no page or board.

code: the one code digest in every key. memo: the `memo` table, the process's one LRU memory and `kept` (memory,
then the table, then compute). codec: every stored payload, named frames as Arrow IPC. frame_cache: a cohort's
input frames under its fact version. board_cache: boards and their parts. housekeeping: `arena cache stats|clear`.
"""
