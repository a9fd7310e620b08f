"""`arena render` writes only inside its --out folder: a symlink planted there (to a file or a folder) is
replaced, never written through, and what it pointed to is left as it was."""

from __future__ import annotations

import os

from arena.cli import main
from arena.store.engine import open_store


def test_render_replaces_symlinks_instead_of_writing_through_them(tmp_path, db_url, capsys):
    open_store(db_url).dispose()  # an empty arena
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    elsewhere.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.symlink(victim, site / "index.html")
    os.symlink(elsewhere, site / "cohorts")
    os.symlink(victim, site / "404.html")
    assert main(["render", "--out", str(site), "--db", db_url]) == 0, capsys.readouterr().err
    assert victim.read_text() == "precious\n"
    assert list(elsewhere.iterdir()) == []
    for name in ("index.html", "404.html"):
        assert not (site / name).is_symlink() and "<html" in (site / name).read_text().lower()
    assert (site / "cohorts").is_dir() and not (site / "cohorts").is_symlink()
    # a second render into the same folder (pages unchanged) still writes nothing through a new link
    os.unlink(site / "index.html")
    os.symlink(victim, site / "index.html")
    assert main(["render", "--out", str(site), "--db", db_url]) == 0
    assert victim.read_text() == "precious\n" and not (site / "index.html").is_symlink()
