"""Shipped configs and decks by name, other files by path: one rule for every config and deck a user names.

The package ships YAML files in ``configs/``: decks (``configs/decks/``: ``standard``), rules configs
(``configs/rules/``: ``standard``, ``hidden_hands``...) and training configs (``configs/train/``:
``quick``, ``standard``...). ``resolve`` turns what a caller gives into the file to read, the same
way for all three (``load_deck``, ``make_config(config=...)`` with its ``deck``/``decks`` keywords,
``trinity train NAME`` and ``--config``), and what a name means does not depend on the working
directory, as for agent specs (``trinity_env.agents.spec``):

1. A string with a path separator (``./quick``, ``configs/x.yaml``) or ending in ``.yaml`` or
   ``.yml`` (``mine.yaml``), or a ``pathlib.Path``, is a path: that file is read.
2. Any other string is a bare name and always means the shipped file of that name, even when a
   file ``./quick`` or ``./standard`` lies in the working directory.
3. A bare name that ships nothing is an error (the caller's class, one line) that lists the
   shipped names and, when a file of that name is in the working directory, says to write ``./NAME``.

A NUL character, which no path can hold, is refused in one line too.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from trinity_env.core.errors import TrinityError
from trinity_env.core.files import short

KINDS = {"decks": "deck", "rules": "rules config", "train": "training config"}
"""The folders of ``configs/`` and what their files are called in messages."""
SUFFIXES = (".yaml", ".yml")
_SEPARATORS = tuple({"/", os.sep, os.altsep or "/"})


def config_root() -> Path:
    """The package's ``configs`` data, found one way (``importlib.resources``) in a checkout and an install.

    In a checkout ``trinity_env/configs`` is a link to the top-level ``configs/`` folder (the
    project's layout); the wheel carries the files themselves there.
    """
    return Path(str(resources.files("trinity_env") / "configs"))


def names_path(text: str) -> bool:
    """Whether ``text`` names a file by path (a separator, or a ``.yaml``/``.yml`` ending) rather than a shipped
    config or deck (the module's rule)."""
    return any(separator in text for separator in _SEPARATORS) or text.endswith(SUFFIXES)


def shipped_names(kind: str) -> list[str]:
    """The names of the files shipped in ``configs/KIND/`` (``kind``: one of ``KINDS``), sorted."""
    return sorted(path.stem for path in (config_root() / kind).glob("*.yaml"))


def resolve(name_or_path: str | Path, kind: str, error: type[TrinityError] = TrinityError) -> Path:
    """The file that ``name_or_path`` names: a shipped ``configs/KIND/NAME.yaml`` for a bare name, else the path
    itself (see the module docstring); ``error`` (one line) for a bare name that ships nothing or a NUL."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    what = KINDS[kind]
    text = str(name_or_path)
    if "\x00" in text:
        raise error(f"a {what} name or path cannot hold a NUL character, got {short(text)}")
    if isinstance(name_or_path, Path) or names_path(text):
        return Path(text)
    known = shipped_names(kind)
    if text in known:
        return config_root() / kind / f"{text}.yaml"
    here = next((text + end for end in ("", *SUFFIXES) if os.path.lexists(text + end)), None)
    hint = f"; to read the file here, name it by a path: {short('./' + here)}" if here is not None else ""
    raise error(
        f"no {what} named {short(text)} (configs/{kind} holds {', '.join(known) or 'none'}; "
        f"a file is named by a path: ./NAME or NAME.yaml){hint}"
    )
