"""BagIt 1.0 bags (RFC 8493) through bagit-python: the one module that imports ``bagit``.

:func:`make_bag` turns a folder into a bag in place (its files move under ``data/``, the
payload manifests, ``bagit.txt``, ``bag-info.txt`` and the tag manifests are written);
bagit-python 1.9 writes ``BagIt-Version: 0.97``, so the version line is then set to 1.0 and
the tag manifests written again (the payload is not hashed twice). :func:`validate_bag`
checks a bag as ``bagit.py --validate`` does. Every error of bagit's (and the ``OSError``
raised while it works) is one :class:`BagError` line; bagit's own log (which would print a
traceback) goes nowhere.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import bagit

from podarchive.core.errors import PodarchiveError, one_line

BAGIT_VERSION = "1.0"
#: The manifests a bag may have (RFC 8493 §2.4: SHA-256 and SHA-512 are what it recommends).
ALGORITHMS = ("sha256", "sha512")
DETAILS_SHOWN = 3  # problems named in a validation's one line

logging.getLogger("bagit").addHandler(logging.NullHandler())
logging.getLogger("bagit").propagate = False  # its LOGGER.exception would print a traceback


class BagError(PodarchiveError):
    """A bag could not be made, or is not valid: one line naming the bag and the problem."""

    default_message = "bag error"


def bagit_version() -> str:
    """bagit-python's version, for ``Bag-Software-Agent``."""
    return str(bagit.VERSION)


def make_bag(
    folder: Path, info: Mapping[str, str | list[str]], algorithms: Sequence[str] = ("sha256",)
) -> None:
    """Make ``folder`` a BagIt 1.0 bag in place: its contents become the payload
    (``data/``), with a manifest per algorithm of ``algorithms`` (of :data:`ALGORITHMS`)
    and ``bag-info.txt`` holding ``info`` (a list: one line each; ``Payload-Oxum`` added)."""
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise BagError(f"not a manifest algorithm: {', '.join(unknown) or 'none given'}")
    cwd = os.getcwd()  # bagit works from inside the bag; Bag.save does not always go back
    try:
        bagit.make_bag(str(folder), bag_info=dict(info), checksums=list(algorithms))
        (folder / "bagit.txt").write_text(
            f"BagIt-Version: {BAGIT_VERSION}\nTag-File-Character-Encoding: UTF-8\n",
            encoding="utf-8",
        )
        bagit.Bag(str(folder)).save()  # bag-info.txt as it was, the tag manifests anew
    except (bagit.BagError, RuntimeError, OSError, ValueError) as e:
        raise BagError(f"cannot make the bag {folder}: {_reason(e)}") from e
    finally:
        os.chdir(cwd)


def validate_bag(folder: Path, *, completeness_only: bool = False) -> None:
    """Check the bag at ``folder`` (every file of every manifest there, and hashed unless
    ``completeness_only``); :class:`BagError` names the first problems."""
    try:
        bagit.Bag(str(folder)).validate(completeness_only=completeness_only)
    except bagit.BagValidationError as e:
        details = [str(d) for d in e.details]
        shown = "; ".join(details[:DETAILS_SHOWN])
        more = len(details) - DETAILS_SHOWN
        text = f"{shown} (and {more} more)" if more > 0 else shown or e.message
        raise BagError(one_line(f"{folder} is not a valid bag: {text}")) from e
    except (bagit.BagError, OSError, ValueError) as e:
        raise BagError(f"{folder} is not a valid bag: {_reason(e)}") from e


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return one_line(f"{e.filename}: {e.strerror}" if e.filename else e.strerror)
    return one_line(str(e) or type(e).__name__)
