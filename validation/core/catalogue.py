"""The one interface of every catalogue (figures, regimes presets, training experiments): an entry and its registry.

A catalogue study runs one named entry of a fixed list. Each entry is one file that declares, as class
attributes, what the study needs to know before running it (its ``name``, ``title``, ``paper``, the
``defaults`` of every setting it takes and a ``smoke`` size that runs in about a second) and implements the
study's steps as methods (compute, table, plot, estimates: the study's own subclass of :class:`Entry` names
their signatures). The study keeps its entries in a :class:`Catalogue`, built once from an explicit tuple:

    FIGURES = Catalogue("figure", (PFFunctionSpace(), PFCorrelation(), …))

so adding an entry is one new file and its line in that tuple (docs/design.md, "Adding a figure").

The registry resolves a run's settings the same way for every study (:meth:`Catalogue.resolve_values`): a given
setting the entry does not take is refused, naming the ones it takes; every other setting is the entry's default
unless given.

It also states them: ``--help`` prints a setting's default from the entries' :attr:`Entry.defaults`
(:meth:`Catalogue.stated_default`), never from prose a maintainer keeps in step by hand.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, Generic, Iterable, Iterator, Mapping, TypeVar

from .settings import ALWAYS_APPLY, SettingsError, defaults_by_value, refuse_inapplicable, settings_given

__all__ = ["Entry", "Catalogue", "cli_text"]


def cli_text(value: Any, none_text: str | None = None) -> str:
    """A setting's value as the command line writes it: ``(8, 32, 128)`` → ``8,32,128``, pairs ``((-1.5, -1.0),
    …)`` → ``-1.5:-1,…``, numbers by ``%g`` (``3.1622776601683795`` → ``3.16228``); ``None`` → ``none_text`` (what
    the setting does when left unset, e.g. "1/√d"; "none" when not given)."""
    if value is None:
        return none_text if none_text is not None else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (tuple, list)):
        return ",".join(":".join(cli_text(part) for part in item) if isinstance(item, (tuple, list))
                        else cli_text(item) for item in value) if value else "none"
    return str(value)


class Entry(abc.ABC):
    """One entry of a catalogue (module docstring). Subclasses set the class attributes below."""

    #: the name given on the command line (``--figure NAME``, ``--preset NAME``, ``--experiment NAME``)
    name: ClassVar[str]
    #: one line: what the entry shows
    title: ClassVar[str]
    #: the paper and figure, table or statement it reproduces or checks
    paper: ClassVar[str] = ""
    #: a value for every setting the entry takes (a setting it does not take is refused when given)
    defaults: ClassVar[Mapping[str, Any]]
    #: settings of a run that takes about a second (the tests, ``docs/make_figures.py --quick``)
    smoke: ClassVar[Mapping[str, Any]] = {}
    #: what the entry's verdict must reject: each planted alternative — the nearest wrong claim a referee would want
    #: excluded, built as a perturbation of the model, the data or the claim, never of the verdict — by the test
    #: that plants it and shows a check FAIL ("tests/FILE.py::test_name"); ``tests/test_alternatives.py`` checks
    #: that every entry declares at least one and that each test exists (docs/theory.md §6)
    rejects: ClassVar[Mapping[str, str]] = {}

    def takes(self) -> frozenset[str]:
        """The settings this entry takes: the keys of :attr:`defaults` unless an entry says otherwise."""
        return frozenset(self.defaults)

    def described(self, noun: str) -> str:
        """How a refusal names this entry: "the NAME NOUN" (``noun``: the catalogue's, e.g. "figure")."""
        return f"the {self.name} {noun}"

    def estimate_mb(self, settings: Any) -> float:
        """A rough upper estimate of the run's peak memory in MiB, from resolved settings (0: not estimated)."""
        return 0.0

    def estimate_seconds(self, settings: Any) -> float:
        """A rough run time on the 2-core reference machine, from resolved settings (0: not estimated)."""
        return 0.0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


E = TypeVar("E", bound=Entry)


class Catalogue(Mapping[str, E], Generic[E]):
    """An ordered, read-only registry of entries by name (the order of ``--list``), with aliases.

    ``catalogue[name]`` is the entry (an alias gives its target); an unknown name is a :class:`SettingsError` on
    the setting ``noun`` naming the allowed ones. Iteration gives the entries' names, not the aliases.
    """

    def __init__(self, noun: str, entries: Iterable[E], aliases: Mapping[str, str] | None = None) -> None:
        self.noun = noun
        self._entries: dict[str, E] = {}
        for entry in entries:
            if entry.name in self._entries:
                raise ValueError(f"two {noun}s are named {entry.name!r}")
            self._entries[entry.name] = entry
        self.aliases = dict(aliases or {})
        for alias, target in self.aliases.items():
            if target not in self._entries or alias in self._entries:
                raise ValueError(f"the alias {alias!r} → {target!r} must name an entry and not be one")

    def with_entries(self, *entries: E) -> "Catalogue[E]":
        """A new catalogue: these entries after this one's (this one is not changed)."""
        return Catalogue(self.noun, (*self._entries.values(), *entries), self.aliases)

    def canonical(self, name: str) -> str:
        """The entry's name for ``name`` (an alias or a name); unknown names are refused."""
        name = self.aliases.get(name, name)
        if name not in self._entries:
            raise SettingsError(self.noun, f"{name!r} unknown (allowed: {', '.join(self.choices())})")
        return name

    def choices(self) -> list[str]:
        """Every name the command line accepts: the entries' and the aliases, sorted."""
        return sorted([*self._entries, *self.aliases])

    def __getitem__(self, name: str) -> E:
        return self._entries[self.canonical(name)]

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self.aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def field(self, attribute: str) -> dict[str, Any]:
        """One class attribute of every entry by name, e.g. ``field("smoke")``."""
        return {name: getattr(entry, attribute) for name, entry in self._entries.items()}

    def resolve_values(self, name: str, settings: Any) -> tuple[E, dict[str, Any], set[str]]:
        """The entry, its settings (its defaults overridden by those given) and the names given.

        ``settings`` is the study's settings dataclass, ``None`` meaning "not given"; a given setting the entry
        does not take is a :class:`SettingsError` naming those it takes.
        """
        entry = self[name]
        given = settings_given(settings)
        refuse_inapplicable(given, entry.takes(), entry.described(self.noun))
        values = {**entry.defaults, **{key: getattr(settings, key) for key in given}}
        return entry, values, given

    def stated_default(self, setting: str, default: Any = None, none_text: str | None = None,
                       entry: str | None = None) -> str | None:
        """The default of ``setting`` as ``--help`` states it, from the entries' own :attr:`Entry.defaults` (None
        when no entry sets it): the one value the entries that take it share, or each value followed by its
        entries, the most common first — ``the figure's: 32 (pf-function-space, pf-abc); 8 (pf-qualitative,
        pf-relu)``. An entry that takes the setting (or one every entry takes: seed, dtype, device) without setting
        it runs at the study's ``default``; ``none_text`` says what a value of None means. With ``entry``
        (``--figure NAME --help``), that entry's value alone."""
        if not any(setting in e.defaults for e in self._entries.values()):
            return None
        chosen = [self[entry]] if entry is not None else list(self._entries.values())
        return defaults_by_value(self.noun, ((taker.name, cli_text(taker.defaults.get(setting, default), none_text))
                                             for taker in chosen if setting in taker.defaults
                                             or setting in taker.takes() or setting in ALWAYS_APPLY))

    def listing(self, header: str) -> str:
        """The ``--list`` text: ``header``, then each entry's name and title, and the flags it takes."""
        lines = [header]
        for name, entry in self._entries.items():
            lines.append(f"  {name:18s} {entry.title}")
            lines.append(f"  {'':18s} takes {', '.join('--' + k.replace('_', '-') for k in sorted(entry.takes()))}")
        return "\n".join(lines)
