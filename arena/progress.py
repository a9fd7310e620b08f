"""Progress of long commands: a tqdm bar on a terminal, plain lines (at most one per `every` steps) when the
output is a file or a pipe, so logs and CI output stay readable."""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    """`update(n, note)` after each step of `total` (0: unknown, a counter); `close()` at the end (or use it as
    a context manager)."""

    def __init__(self, total: int, desc: str, *, stream: TextIO | None = None, unit: str = "step",
                 every: int | None = None, tty: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = max(0, int(total))
        self.desc = desc
        self.unit = unit
        self.done = 0
        self.note = ""
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        # Plain lines: about ten per run, never more than one per step.
        self.every = every if every is not None else max(1, self.total // 10) if self.total else 10
        self._bar: Any = None
        if self.tty:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total or None, desc=desc, unit=unit, file=self.stream, leave=True,
                             dynamic_ncols=True)

    def units(self, n: int) -> str:
        """The unit counted n times: "1 day", "3 days", "2 batches"."""
        if n == 1:
            return self.unit
        return self.unit + ("es" if self.unit.endswith(("s", "x", "z", "ch", "sh")) else "s")

    def finish(self, note: str = "") -> None:
        """The run ended before `total` (e.g. every cohort completed early): the count becomes the total, and the
        last line says so with `note`."""
        if self.total and self.done < self.total:
            self.total = self.done
            self.note = note or self.note
            if self._bar is not None:
                self._bar.total = self.done
                if note:
                    self._bar.set_postfix_str(note, refresh=False)
                self._bar.refresh()
            else:
                tail = f" — {self.note}" if self.note else ""
                print(f"{self.desc}: {self.done}/{self.total} {self.units(self.total)}{tail}", file=self.stream,
                      flush=True)

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        self.note = note or self.note
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(n)
        elif self.done % self.every == 0 or self.done == self.total:
            tail = f" — {self.note}" if self.note else ""
            of = f"/{self.total}" if self.total else ""
            print(f"{self.desc}: {self.done}{of} {self.units(self.total or self.done)}{tail}", file=self.stream,
                  flush=True)

    def close(self) -> None:
        if self._bar is None and not self.total and self.done % self.every:  # a counter's last count
            print(f"{self.desc}: {self.done} {self.units(self.done)} — {self.note}".rstrip(" —"), file=self.stream,
                  flush=True)
            self.every = self.done + 1  # once
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Progress"]
