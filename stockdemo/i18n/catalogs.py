"""The catalogs' tool: ``make catalogs`` extracts, updates and compiles them (Babel), and the
tests read ``problems()``.

One catalog per area of the code (``DOMAINS``, first match wins), so people translating
different pages at once edit different files, all under ``stockdemo/locale/``: the template
``AREA.pot``, each language's ``LANG/LC_MESSAGES/AREA.po`` and its compiled ``.mo``
(committed, shipped in the wheel). Entries are sorted by file, with no line numbers, so an
edit elsewhere in a file does not rewrite a catalog. ``stockdemo.i18n.catalog`` merges a
language's areas when first used.

    python -m stockdemo.i18n.catalogs            # extract, update, compile (make catalogs)
    python -m stockdemo.i18n.catalogs --check    # what is missing, untranslated, fuzzy or stale
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import io
import sys
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from stockdemo.i18n import LOCALE_DIR
from stockdemo.i18n.spoken import ENGLISH, LANGUAGES

ROOT = Path(__file__).resolve().parents[2]
# (area, the files whose words it holds): a file belongs to the first area that names it.
def _core(*globs: str) -> tuple[str, ...]:
    """Globs inside the package (some name files still to come: the lessons' folder, the view's words)."""
    return tuple("stockdemo/" + g for g in globs)


DOMAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("view", _core("render/words.py")),  # the graph view's and the editor's words (JavaScript)
    ("classroom", (*_core("classroom/*", "ui/classmode/*"), "pages/classroom.py")),
    ("lessons", ("lessons/*.toml", *_core("lesson.py", "lessons/*", "ui/steps.py"), "pages/lesson.py")),
    ("lab", (*_core("lab/*"), "pages/lab.py")),
    ("code", (*_core("sandbox/*", "code/*", "ui/code_*"), "pages/code.py")),
    ("graph", _core("graph/*", "layout/*", "replay/*", "render/*", "notebook/*", "__main__.py")),
    ("app", ("app.py", "pages/*", *_core("ui/*"))),  # the page frame, the pages, their panels
    ("core", _core("*")),  # config, knobs, figures, live/, train/, static_graphs/, ...
)
SOURCES = ("app.py", "pages/*.py", "stockdemo/**/*.py", "lessons/*.toml")
# The functions of stockdemo.i18n that take words (Babel's keyword specs).
KEYWORDS = {"tr": None, "trn": (1, 2), "trp": ((1, "c"), 2), "N_": None, "Nn_": (1, 2), "later": None,
            "later_n": (1, 2)}
COMMENT_TAGS = ("i18n:",)  # "# i18n: ..." above a string is a note for its translators
WIDTH = 100
# Fixed: a date in the template's header would change it at every extraction.
CREATED = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def domain_of(path: str) -> str:
    """The area whose catalog holds the words of ``path`` (relative to the repository)."""
    return next(name for name, globs in DOMAINS if any(fnmatch.fnmatch(path, g) for g in globs))


def sources(root: Path = ROOT) -> Iterator[Path]:
    seen = set()
    for pattern in SOURCES:
        for path in sorted(root.glob(pattern)):
            if path not in seen and "__pycache__" not in path.parts:
                seen.add(path)
                yield path


def extract(root: Path = ROOT) -> dict[str, Catalog]:
    """Every marked string of the code and the lessons -> a template per area."""
    from stockdemo.i18n.lessons import extract_lesson  # the TOML extractor

    templates = {name: _catalog(None, name) for name, _ in DOMAINS}
    for path in sources(root):
        rel = path.relative_to(root).as_posix()
        method = extract_lesson if path.suffix == ".toml" else "python"
        for lineno, message, comments, context in extract_from_file(
                method, str(path), keywords=KEYWORDS, comment_tags=COMMENT_TAGS, strip_comment_tags=True):
            templates[domain_of(rel)].add(message, None, [(rel, lineno)], auto_comments=comments,
                                          context=context)
    return templates


def _catalog(lang: str | None, domain: str) -> Catalog:
    return Catalog(locale=lang, domain=domain, project="stockdemo", version="0.1",
                   copyright_holder="stockdemo", charset="utf-8", creation_date=CREATED,
                   revision_date=CREATED, fuzzy=False)


def template_path(domain: str) -> Path:
    return LOCALE_DIR / f"{domain}.pot"


def po_path(lang: str, domain: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{domain}.po"


def po_text(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=WIDTH, sort_by_file=True, include_lineno=False, ignore_obsolete=True)
    return out.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def read(path: Path, lang: str | None = None) -> Catalog:
    with path.open("rb") as fp:
        return read_po(fp, locale=lang)


def translated(lang: str, domain: str, template: Catalog) -> Catalog:
    """``lang``'s catalog of ``domain`` brought up to ``template``: new strings empty, changed
    ones fuzzy (the old translation kept for the translator), gone ones dropped."""
    path = po_path(lang, domain)
    catalog = read(path, lang) if path.exists() else _catalog(lang, domain)
    catalog.update(template, update_header_comment=False)
    return catalog


def build(root: Path = ROOT) -> None:
    """make catalogs: the templates from the code, each language's catalog updated and compiled."""
    for domain, template in extract(root).items():
        template_path(domain).write_bytes(po_text(template))
        for lang in LANGUAGES:
            if lang == ENGLISH:
                continue
            catalog = translated(lang, domain, template)
            po_path(lang, domain).parent.mkdir(parents=True, exist_ok=True)
            po_path(lang, domain).write_bytes(po_text(catalog))
            po_path(lang, domain).with_suffix(".mo").write_bytes(mo_bytes(read(po_path(lang, domain), lang)))


def problems(root: Path = ROOT) -> list[str]:
    """What keeps the catalogs from being complete and current, one line each (none: all good)."""
    found = []
    for domain, template in extract(root).items():
        wanted = {m.id for m in template if m.id}
        pot = template_path(domain)
        kept = {m.id for m in read(pot) if m.id} if pot.exists() else set()
        found += [f"{domain}.pot lacks {_short(i)} (make catalogs)" for i in wanted - kept]
        found += [f"{domain}.pot still has {_short(i)}, gone from the code (make catalogs)"
                  for i in kept - wanted]
        for lang in (lang for lang in LANGUAGES if lang != ENGLISH):
            found += _catalog_problems(lang, domain, wanted)
    return found


def _catalog_problems(lang: str, domain: str, wanted: set) -> list[str]:
    path = po_path(lang, domain)
    if not path.exists():
        return [f"{lang}/{domain}.po is missing (make catalogs)"] if wanted else []
    catalog = read(path, lang)
    name = f"{lang}/{domain}.po"
    found = [f"{name}: fuzzy {_short(m.id)}" for m in catalog if m.id and m.fuzzy]
    found += [f"{name}: untranslated {_short(m.id)}" for m in catalog
              if m.id and not (all(m.string) if isinstance(m.string, tuple) else m.string)]
    found += [f"{name}: lacks {_short(i)} (make catalogs)" for i in wanted - {m.id for m in catalog if m.id}]
    mo = path.with_suffix(".mo")
    if not mo.exists() or mo.read_bytes() != mo_bytes(catalog):
        found.append(f"{lang}/{domain}.mo is not compiled from its .po (make catalogs)")
    return found


def _short(msgid: str | tuple) -> str:
    text = msgid[0] if isinstance(msgid, tuple) else msgid
    return repr(text if len(text) <= 60 else text[:57] + "...")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="report what is missing or stale; change nothing")
    args = parser.parse_args(argv)
    if not args.check:
        build()
    found = problems()
    print("\n".join(found) or "catalogs complete and current")
    return 1 if found and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
