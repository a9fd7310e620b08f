"""The CLI documents itself: every option of every command has help text showing its default, every choice
(venues, job names, formats) is listed, and `arena --help` lists every command with a one-line description."""

from __future__ import annotations

import argparse

import pytest

from arena.cli import main, parser
from arena.usecases.venue_registry import VENUE_NAMES as VENUES
from arena.config import KNOWN_JOBS


def _commands(p: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, its parser, its one-line help) for every subcommand, nested ones included."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), sub, helps.get(name)
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(parser()))


def test_every_command_is_listed_with_a_description(capsys):
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    assert len(COMMANDS) >= 14
    for path, sub, one_line in COMMANDS:
        assert one_line and one_line.strip(), f"`arena {' '.join(path)}` has no one-line description"
        assert sub.description == one_line  # its own --help opens with it
        if len(path) == 1:
            assert path[0] in top and " ".join(one_line.split()[:3]) in " ".join(top.split())


@pytest.mark.parametrize("path, sub", [(p, s) for p, s, _ in COMMANDS], ids=[" ".join(p) for p, _, _ in COMMANDS])
def test_every_option_has_help_that_shows_its_default_and_choices(path, sub, capsys):
    text = "".join(sub.format_help().split())  # without whitespace: the help wraps lines (also at hyphens)
    for action in sub._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"arena {' '.join(path)} {name}: no help text"
        fmt = sub._get_formatter()
        shown = fmt._expand_help(argparse.Action(action.option_strings, action.dest, default=action.default,
                                                 choices=action.choices, help=fmt._get_help_string(action)))
        assert "".join(shown.split()) in text
        if action.option_strings and action.default not in (None, False) and not action.required:
            assert "default" in shown.lower() and str(action.default) in shown, f"{name}: default not shown"
        for choice in action.choices or ():
            assert str(choice) in text, f"{name}: choice {choice!r} not shown"


def test_venues_and_job_names_are_listed():
    helps = {path: " ".join(sub.format_help().split()) for path, sub, _ in COMMANDS}
    for path in (("sync",), ("jobs",), ("scheduler",)):
        assert all(v in helps[path] for v in VENUES), path
    assert all(job in helps[("jobs",)] for job in (*KNOWN_JOBS, "render"))


def test_the_job_names_listed_are_the_scheduler_s():
    from arena.jobs.scheduler import JOB_MODULES

    assert set(JOB_MODULES) == {*KNOWN_JOBS, "render"}


def test_one_job_registry_feeds_the_config_the_scheduler_and_the_cli():
    from arena.jobs import JOB_NAMES, JOBS, SCHEDULED_JOBS
    from arena.jobs.runtime import Runtime
    from arena.jobs.scheduler import job_specs

    assert tuple(KNOWN_JOBS) == SCHEDULED_JOBS  # the config's [schedule] keys
    assert [s.id for s in job_specs(Runtime(engine=None))] == list(SCHEDULED_JOBS)  # type: ignore[arg-type]
    assert {s.id: s.renders for s in job_specs(Runtime(engine=None))} == {  # type: ignore[arg-type]
        j: JOBS[j].renders for j in SCHEDULED_JOBS}
    assert set(JOB_NAMES) == set(SCHEDULED_JOBS) | {"render"}
