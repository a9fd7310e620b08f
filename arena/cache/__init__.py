"""Caches of the read side: results computed from stored facts, kept under a key of what they were computed from.
A cache entry is never a fact; emptying every cache changes no page or board.
"""
