"""Study settings: frozen dataclasses whose fields carry their own help text, command-line syntax and checks.

Each study declares one settings class. A field is declared with :func:`setting`, which records the help
text, the command-line flag and how text is parsed; the class's ``check()`` verifies every value (type and
range) and raises :class:`SettingsError` naming the setting, the bad value and what is allowed. The same
class therefore serves the Python API (``run(..., samples=100)``: keywords with the command line's
defaults) and the command line (:mod:`validation.core.cli` builds the flags from the fields), and the two
cannot drift apart.

The settings every study shares (seed, dtype, device) are declared once, in :class:`CommonSettings`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import torch

__all__ = [
    "SettingsError", "UsageError", "setting", "CommonSettings", "settings_dict", "check_int", "check_float", "check_choice",
    "check_depths", "check_power_of_two", "is_power_of_two", "parse_power_of_two_list", "parse_float_list",
    "parse_int_list", "parse_grid", "parse_name_value", "distinct_names", "DTYPES", "torch_dtype",
    "optional_torch_dtype", "resolve_device", "defaults_by_value",
    "make_settings", "settings_given", "refuse_inapplicable", "ALWAYS_APPLY", "MIN_CONFIDENCE",
]

#: the lowest confidence level of an interval a verdict reads (below one half an "interval" says next to nothing:
#: at 1e-300 a run printed "the 0% interval [0.495, 0.495]" and PASSed)
MIN_CONFIDENCE = 0.5


class UsageError(ValueError):
    """Bad input found outside a settings class (e.g. an output path or a memory limit): exit status 2."""


class SettingsError(ValueError):
    """A bad setting: ``name`` is the setting (the field name), the message says what was given and what is
    allowed. The command line shows it as ``error: --flag: message`` with exit status 2."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # raised in a worker process, it comes back to the parent whole (the default pickling passes one argument)
        return type(self), (self.name, self.message)


def setting(default: Any, help: str, *, parse: Callable[[str], Any] | None = None, flag: str | None = None,
            metavar: str | None = None, group: str = "study", cli: bool = True, choices: Sequence[str] | None = None,
            default_text: str | None = None, action: str | None = None, aliases: Sequence[str] = ()) -> Any:
    """A settings field with its documentation and command-line syntax.

    Args:
        default: the default (also the command line's); lists must be given as tuples (frozen).
        help: one sentence for ``--help`` and the API reference.
        parse: turns the command-line text into a value (syntax only; ranges are checked by ``check()``).
        flag: the command-line flag (default ``--name-with-dashes``).
        metavar, choices: as in argparse.
        group: the ``--help`` section ("model", "study", "fit and verdict", "run and output", …).
        cli: False for a setting that has no flag.
        default_text: how ``--help`` states the default when it is computed (e.g. "the model's").
        action: ``"store_true"`` / ``"store_false"`` for a switch, ``"append"`` for a repeatable flag.
        aliases: other flags for the same setting (e.g. ``("--bootstrap",)``); each is also accepted as a keyword
            of ``run(...)`` (``bootstrap=…``), by :func:`make_settings`.
    """
    meta = {"help": help, "parse": parse, "flag": flag, "metavar": metavar, "group": group, "cli": cli,
            "choices": choices, "default_text": default_text, "action": action, "aliases": tuple(aliases)}
    return dataclasses.field(default=default, metadata=meta)


# ---------------------------------------------------------------------------------------------- checks
def check_int(name: str, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int within [minimum, maximum]; booleans and non-integral numbers are refused."""
    allowed = " and ".join(([f"≥ {minimum}"] if minimum is not None else []) +
                           ([f"≤ {maximum}"] if maximum is not None else []))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SettingsError(name, f"{value!r} is not an integer (allowed: an integer{' ' + allowed if allowed else ''})")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise SettingsError(name, f"{value} is out of range (must be {allowed})")
    return value


def check_float(name: str, value: Any, minimum: float | None = None, maximum: float | None = None, *,
                strict_min: bool = False, strict_max: bool = False) -> float:
    """``value`` as a finite float within the bounds (strict with ``strict_min``/``strict_max``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(name, f"{value!r} is not a number") from None
    if isinstance(value, bool):
        raise SettingsError(name, f"{value!r} is not a number")
    if not math.isfinite(number):
        raise SettingsError(name, f"{number} must be finite")
    low_ok = minimum is None or (number > minimum if strict_min else number >= minimum)
    high_ok = maximum is None or (number < maximum if strict_max else number <= maximum)
    if not (low_ok and high_ok):
        parts = []
        if minimum is not None:
            parts.append(f"{'>' if strict_min else '≥'} {minimum:g}")
        if maximum is not None:
            parts.append(f"{'<' if strict_max else '≤'} {maximum:g}")
        if minimum == 0 and not strict_min and maximum is None:
            raise SettingsError(name, f"{number} is negative (must be ≥ 0)")
        raise SettingsError(name, f"{number} is out of range (must be {' and '.join(parts)})")
    return number


def check_choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise SettingsError(name, f"{value!r} unknown (allowed: {', '.join(allowed)})")
    return value


def is_power_of_two(n: int) -> bool:
    return isinstance(n, int) and n >= 1 and n & (n - 1) == 0


def check_power_of_two(name: str, value: Any, minimum: int = 1) -> int:
    value = check_int(name, value, minimum)
    if not is_power_of_two(value):
        raise SettingsError(name, f"{value} is not a power of two (allowed: 1, 2, 4, 8, …)")
    return value


def check_depths(name: str, values: Any, *, powers_of_two: bool, at_least: int = 2, maximum: int | None = None
                 ) -> tuple[int, ...]:
    """Depths as a tuple of strictly increasing integers ≥ 1 (powers of two if asked), at least ``at_least``."""
    try:
        items = list(values)
    except TypeError:
        raise SettingsError(name, f"{values!r} is not a list of depths") from None
    depths = tuple(check_int(name, v, 1, maximum) for v in items)
    if len(depths) < at_least:
        raise SettingsError(name, f"{list(depths)}: at least {'two' if at_least == 2 else at_least} depths are "
                                  f"needed{' to fit a rate' if at_least == 2 else ''}")
    for d in depths:
        if powers_of_two and not is_power_of_two(d):
            raise SettingsError(name, f"depth {d} is not a power of two (allowed: 1, 2, 4, 8, …)")
    for a, b in zip(depths, depths[1:]):
        if b <= a:
            raise SettingsError(name, f"depths must be strictly increasing, got {a} then {b}")
    return depths


# ---------------------------------------------------------------------------------------------- parsers
def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None


def distinct_values(text: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The one rule of every list flag: at least one value, none twice (a value given twice is a typo, and would
    count a depth, a β or a tolerance twice in a fit or a table)."""
    if not values:
        raise ValueError(f"{text!r} gives no value (give at least one, comma-separated)")
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{text!r} gives {value:g} twice (give each value once)")
        seen.add(value)
    return values


def parse_power_of_two_list(text: str) -> tuple[int, ...]:
    """Depths as a comma list ``4,8,16`` or a range ``4:1024`` (every power of two from 4 to 1024)."""
    text = text.strip()
    if ":" in text:
        low_text, _, high_text = text.partition(":")
        low, high = _int(low_text), _int(high_text)
        for n in (low, high):
            if not is_power_of_two(n):
                raise ValueError(f"depth {n} is not a power of two (allowed: 1, 2, 4, 8, …)")
        if high <= low:
            raise ValueError(f"depth range {text!r} must go from low to high")
        values, n = [], low
        while n <= high:
            values.append(n)
            n *= 2
        return tuple(values)
    return distinct_values(text, tuple(_int(part) for part in text.split(",") if part.strip()))


def parse_int_list(text: str) -> tuple[int, ...]:
    return distinct_values(text, tuple(_int(part) for part in text.split(",") if part.strip()))


def parse_float_list(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not a comma-separated list of numbers") from None
    return distinct_values(text, values)


def parse_grid(text: str) -> tuple[float, ...]:
    """``a:b:n`` (n evenly spaced values from a to b, n ≤ 10 000) or a comma list."""
    import numpy as np

    if text.count(":") == 2:
        a, b, n = text.split(":")
        try:
            start, stop, count = float(a), float(b), int(n)
        except ValueError:
            raise ValueError(f"grid {text!r}: use 'a:b:n' (n an integer) or a comma list of numbers") from None
        if not 1 <= count <= 10_000:
            raise ValueError(f"grid {text!r}: the count {count} is out of range (must be ≥ 1 and ≤ 10000)")
        return distinct_values(text, tuple(np.linspace(start, stop, count).tolist()))
    return parse_float_list(text)


def parse_name_list(text: str) -> tuple[str, ...]:
    """Names as a comma list (``euler,milstein``): at least one; each study checks the names themselves."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise ValueError(f"{text!r} names nothing (give names, comma-separated)")
    return names


def distinct_names(name: str, names: Sequence[str]) -> tuple[str, ...]:
    """A setting's list of names as a tuple, refusing a name given twice (a method, scheme or data set named twice ran
    twice, and its check and fit counted twice)."""
    names = tuple(names)
    twice = next((value for i, value in enumerate(names) if value in names[:i]), None)
    if twice is not None:
        raise SettingsError(name, f"{','.join(map(str, names))} names {twice!r} twice (give each once)")
    return names


def parse_name_value(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (a ``--set`` item)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"{text!r} must look like NAME=VALUE")
    return key.strip(), value.strip()


#: the parsers of list settings: a text given for one of these through the Python API is parsed the same way
LIST_PARSERS = (parse_power_of_two_list, parse_int_list, parse_float_list, parse_grid)


# ---------------------------------------------------------------------------------------------- common
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def torch_dtype(name: str) -> torch.dtype:
    return DTYPES[name]


def optional_torch_dtype(name: str | None) -> torch.dtype | None:
    """The torch type named ``name`` ("float32", "float64"), or None for None (a draw in the study's --dtype)."""
    return None if name is None else DTYPES[name]


def _normalise_dtype(value: Any) -> str:
    if isinstance(value, torch.dtype):
        value = str(value).replace("torch.", "")
    return check_choice("dtype", value, DTYPES)


def check_device_text(value: Any) -> str:
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (syntax only; availability is checked when the run starts)."""
    text = str(value).strip() if isinstance(value, (str, torch.device)) else None
    if text is None:
        raise SettingsError("device", f"{value!r} is not a device (allowed: auto, cpu, cuda, cuda:N)")
    if text in ("auto", "cpu", "cuda"):
        return text
    if text.startswith("cuda:") and text[5:].isdigit():
        return text
    raise SettingsError("device", f"{text!r} unknown (allowed: auto, cpu, cuda, cuda:N with N ≥ 0)")


def resolve_device(text: str) -> torch.device:
    """``auto`` → cuda if available else cpu; a cuda device that is absent is a :class:`SettingsError`."""
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(text)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise SettingsError("device", f"{text!r} requested but CUDA is not available here (use --device cpu)")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            allowed = "cuda:0" if count == 1 else f"cuda:0 … cuda:{count - 1}"
            raise SettingsError("device", f"{text!r}: this machine has {count} CUDA device{'s' if count > 1 else ''} "
                                          f"(allowed: {allowed})")
    return device


@dataclass(frozen=True)
class CommonSettings:
    """The settings every study has: ``seed``, ``dtype`` and ``device``.

    Subclasses add their own fields (all with defaults) and extend :meth:`check`, calling
    ``super().check()``; ``__post_init__`` runs it, so an instance is always valid.
    """

    seed: int = setting(0, "seed of every random draw (weights, inputs, bootstrap); an integer ≥ 0",
                        parse=int, group="run and output")
    dtype: str = setting("float64", "floating-point type of the computation: float64 or float32",
                         choices=tuple(DTYPES), group="run and output")
    device: str = setting("cpu", "cpu, cuda, cuda:N or auto (cuda when available)", group="run and output")

    def __post_init__(self) -> None:
        object.__setattr__(self, "_normalising", True)
        try:
            for field in dataclasses.fields(self):  # a list setting given as text takes the command line's syntax
                parse = field.metadata.get("parse")
                value = getattr(self, field.name)
                if isinstance(value, str) and parse in LIST_PARSERS:
                    try:
                        self._set(field.name, parse(value))
                    except ValueError as exc:
                        raise SettingsError(field.name, str(exc)) from None
            self.check()
        finally:
            object.__delattr__(self, "_normalising")

    def _set(self, name: str, value: Any) -> None:
        """Normalise a field in place — only while the settings are being built (``check`` from ``__post_init__``,
        the way a frozen dataclass normalises its fields). Afterwards they are frozen: a changed setting is a new
        object (:meth:`replace`, ``dataclasses.replace``), so a settings object never changes under its reader."""
        if not self.__dict__.get("_normalising"):
            raise dataclasses.FrozenInstanceError(f"settings are frozen once built: {name} cannot change; use "
                                                  f".replace({name}=…) for a changed copy")
        object.__setattr__(self, name, value)

    def check(self) -> None:
        self._set("seed", check_int("seed", self.seed, 0, 2**63 - 1))
        if self.dtype is not None:  # None: a study's "the preset's" (resolved before use)
            self._set("dtype", _normalise_dtype(self.dtype))
        self._set("device", check_device_text(self.device))

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def replace(self, **changes: Any):
        return dataclasses.replace(self, **changes)


#: the settings every study takes: never refused as "does not apply"
ALWAYS_APPLY = ("seed", "dtype", "device")


def defaults_by_value(owner: str, values: Iterable[tuple[str, str]]) -> str | None:
    """How ``--help`` states a default that each of several owners (catalogue entries, shipped models) sets for
    itself, from ``(owner's name, value as text)`` pairs: the value alone when they all agree, else "the OWNER's: "
    and each value with its owners, the most common first — "the figure's: 32 (pf-abc, pf-2d); 8 (pf-relu)". None
    for no pair."""
    groups: dict[str, list[str]] = {}
    for name, text in values:
        groups.setdefault(text, []).append(name)
    if len(groups) <= 1:
        return next(iter(groups), None)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))  # stable: ties keep the owners' order
    return f"the {owner}'s: " + "; ".join(f"{text} ({', '.join(names)})" for text, names in ordered)


def settings_given(settings: Any, *, against_defaults: bool = False) -> set[str]:
    """The names of the command-line settings given: those not None (``against_defaults``: not equal to their
    field's default), :data:`ALWAYS_APPLY` left out."""
    defaults = {f.name: f.default for f in dataclasses.fields(settings)}
    return {f.name for f in dataclasses.fields(settings) if f.metadata.get("cli") and f.name not in ALWAYS_APPLY
            and (getattr(settings, f.name) != defaults[f.name] if against_defaults
                 else getattr(settings, f.name) is not None)}


def refuse_inapplicable(given: Iterable[str], applies: Iterable[str], where: str, *, takes: str | None = None) -> None:
    """The one refusal of a setting that does not apply (a preset's, a figure's, an experiment's): a
    :class:`SettingsError` naming the first given setting outside ``applies`` and the flags ``where`` takes
    (``takes``: that list in words, when it is not ``applies`` itself)."""
    applies = set(applies)
    extra = sorted(set(given) - applies)
    if extra:
        listed = takes if takes is not None else ", ".join("--" + n.replace("_", "-") for n in sorted(applies))
        raise SettingsError(extra[0], f"does not apply to {where}; it takes {listed}")


def settings_dict(settings: Any) -> dict[str, Any]:
    """A settings dataclass as a JSON-ready dict (tuples as lists, mappings as dicts)."""
    out = {}
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, tuple):
            value = list(value)
        elif hasattr(value, "items"):
            value = dict(value)
        out[f.name] = value
    return out


def make_settings(cls: type, settings: Any | None, overrides: dict[str, Any]) -> Any:
    """``settings`` (an instance of ``cls``, or None for the defaults) with ``overrides`` applied; an
    unknown keyword is a :class:`SettingsError` listing the known ones."""
    names = {f.name for f in dataclasses.fields(cls)}
    overrides = dict(overrides)
    for field in dataclasses.fields(cls):  # an alias keyword (bootstrap=…) is its setting's (resamples=…)
        for alias in field.metadata.get("aliases", ()):
            keyword = alias.lstrip("-").replace("-", "_")
            if keyword != field.name and keyword in overrides:
                if field.name in overrides:
                    raise SettingsError(field.name, f"given twice, as {field.name} and as its alias {keyword}")
                overrides[field.name] = overrides.pop(keyword)
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise SettingsError(unknown[0], f"no such setting for this study (its settings: {', '.join(sorted(names))})")
    if settings is None:
        return cls(**overrides)
    if not isinstance(settings, cls):
        raise TypeError(f"settings must be a {cls.__name__}, got {type(settings).__name__}")
    return dataclasses.replace(settings, **overrides) if overrides else settings
