"""One grammar of what people may type, on every channel: the words live in the catalogs' ``[words]`` tables.

A ``Verb`` is something a person can ask for; its words are the union of every catalog's (every theme, every
language), so a German player at an English table can type ``weiter``, and the vote words of every theme count
(``ja``, ``yes``, ``approve``, ``Dafür``). Words are compared without case or accents (``jose`` is ``José``).
A channel passes the words its carrier keeps for itself (``Capabilities.reserved_words``: Twilio's STOP, HELP…),
which then mean nothing here; ``help`` is written from the same table, so it names only words the channel takes.

``parse`` gives the command a line means, or None: free text, which the service matches against the options of
the reader's newest prompt and against names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Final, Protocol

from .catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, languages, messages_dir, read_file, themes
from .commands import (
    REMINDER_MINUTES,
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Host,
    HostCommand,
    Join,
    Leave,
    MovePhone,
    MoveSeat,
    OpenTable,
    Query,
    RecordVotes,
    RemoveSeat,
    Rename,
    Seating,
    SetLanguage,
    SetReminders,
    SetTableVoting,
    SetTheme,
    Speak,
    StandIn,
    Start,
    number,
)


class Offers(Protocol):
    """What a channel offers of the grammar (``channels.Capabilities`` has these)."""

    @property
    def verbs(self) -> frozenset[str] | None: ...

    @property
    def paid_per_message(self) -> bool: ...


class Verb(StrEnum):
    """What a person can ask for by typing; the value is its key in the catalogs' ``[words]``."""

    HELP = "help"
    RULES = "rules"
    BOARD = "board"
    WHOAMI = "whoami"
    WAITING = "waiting"
    LANGUAGE = "language"
    RENAME = "rename"
    OPEN = "newgame"
    JOIN = "join"
    LEAVE = "leave"
    START = "startgame"
    SEATS = "seats"
    MOVE = "move"
    REMOVE = "remove"
    COMPUTERS = "computers"
    NEWPHONE = "newphone"
    TABLEVOTES = "tablevotes"
    REMINDERS = "reminders"
    PAUSE = "pause"
    RESUME = "resume"
    NUDGE = "nudge"
    ENDGAME = "endgame"
    REMATCH = "rematch"
    HOSTONLY = "hostonly"
    ALLPHONES = "allphones"
    COST = "cost"
    THEME = "theme"
    STANDIN = "standin"
    RETURN = "return"
    VOTES = "votes"
    CLAIM = "claim"
    ACCUSE = "accuse"
    TRUST = "trust"
    JA = "ja"
    NEIN = "nein"
    NOMINATE = "nominate"
    INVESTIGATE = "investigate"
    ELECT = "elect"
    EXECUTE = "execute"
    DISCARD = "discard"
    ENACT = "enact"
    VETO = "veto"
    ACCEPT = "accept"
    REFUSE = "refuse"


_VERB_KEYS: Final = frozenset(v.value for v in Verb)
NOT_NAMES: Final = "not-names"
"""The ``[words]`` key of the words the texts use for their reader (``you``, ``du``): nobody may be called that."""
SWITCH_ON, SWITCH_OFF = "switch-on", "switch-off"
"""The ``[words]`` keys of what switches votes at the table or reminders on and off (``on``, ``aus``)."""
QUIT: Final = "quit"
"""The ``[words]`` key of what leaves a console game (``quit``, ``beenden``): the console's own, no verb."""
BEFORE_NAMES: Final = "before-names"
"""The ``[words]`` key of the small words a language puts before a name ("acuso *a* Bob", "mi fido *di* Bob")."""
NAME_ENDINGS: Final = "name-endings"
"""The ``[words]`` key of the endings a language declines a name with ("oskarżam Bob*a*", "ufam Ew*ie*")."""


class Who(StrEnum):
    """Who may use a verb (help lists a person what they may use)."""

    ANYONE = "anyone"
    HOST = "host"
    PLAYER = "player"
    """A seat deciding: a vote, a nomination, a card…"""


class Args(StrEnum):
    """What follows a verb's word."""

    NONE = "none"
    OPTIONAL = "optional"
    REQUIRED = "required"


@dataclass(frozen=True, slots=True)
class Rule:
    """A verb's grammar: who uses it, what follows it, and its section in help."""

    who: Who
    args: Args
    help: bool = True
    """Listed in help (a decision's words are listed by its prompt instead)."""
    paid: bool = False
    """About what texts cost: offered only where each message is paid for (``Capabilities.paid_per_message``)."""


RULES: Final[Mapping[Verb, Rule]] = {
    Verb.HELP: Rule(Who.ANYONE, Args.NONE),
    Verb.RULES: Rule(Who.ANYONE, Args.NONE),
    Verb.BOARD: Rule(Who.ANYONE, Args.NONE),
    Verb.WHOAMI: Rule(Who.ANYONE, Args.NONE),
    Verb.WAITING: Rule(Who.ANYONE, Args.NONE),
    Verb.LANGUAGE: Rule(Who.ANYONE, Args.OPTIONAL),
    Verb.RENAME: Rule(Who.ANYONE, Args.REQUIRED),
    Verb.OPEN: Rule(Who.ANYONE, Args.OPTIONAL),
    Verb.JOIN: Rule(Who.ANYONE, Args.REQUIRED),
    Verb.LEAVE: Rule(Who.ANYONE, Args.NONE),
    Verb.START: Rule(Who.HOST, Args.NONE),
    Verb.SEATS: Rule(Who.HOST, Args.OPTIONAL),
    Verb.MOVE: Rule(Who.HOST, Args.REQUIRED),
    Verb.REMOVE: Rule(Who.HOST, Args.REQUIRED),
    Verb.COMPUTERS: Rule(Who.HOST, Args.OPTIONAL),
    Verb.NEWPHONE: Rule(Who.HOST, Args.REQUIRED),
    Verb.TABLEVOTES: Rule(Who.HOST, Args.REQUIRED),
    Verb.REMINDERS: Rule(Who.HOST, Args.REQUIRED),
    Verb.PAUSE: Rule(Who.HOST, Args.NONE),
    Verb.RESUME: Rule(Who.HOST, Args.NONE),
    Verb.NUDGE: Rule(Who.HOST, Args.NONE),
    Verb.ENDGAME: Rule(Who.HOST, Args.NONE),
    Verb.REMATCH: Rule(Who.HOST, Args.NONE),
    Verb.HOSTONLY: Rule(Who.HOST, Args.NONE, paid=True),
    Verb.ALLPHONES: Rule(Who.HOST, Args.NONE, paid=True),
    Verb.COST: Rule(Who.HOST, Args.NONE, paid=True),
    Verb.THEME: Rule(Who.HOST, Args.OPTIONAL),
    Verb.STANDIN: Rule(Who.HOST, Args.REQUIRED),
    Verb.RETURN: Rule(Who.HOST, Args.REQUIRED),
    Verb.VOTES: Rule(Who.PLAYER, Args.OPTIONAL),
    Verb.CLAIM: Rule(Who.PLAYER, Args.REQUIRED),
    Verb.ACCUSE: Rule(Who.PLAYER, Args.REQUIRED),
    Verb.TRUST: Rule(Who.PLAYER, Args.REQUIRED),
    Verb.JA: Rule(Who.PLAYER, Args.NONE, help=False),
    Verb.NEIN: Rule(Who.PLAYER, Args.NONE, help=False),
    Verb.NOMINATE: Rule(Who.PLAYER, Args.REQUIRED, help=False),
    Verb.INVESTIGATE: Rule(Who.PLAYER, Args.REQUIRED, help=False),
    Verb.ELECT: Rule(Who.PLAYER, Args.REQUIRED, help=False),
    Verb.EXECUTE: Rule(Who.PLAYER, Args.REQUIRED, help=False),
    Verb.DISCARD: Rule(Who.PLAYER, Args.REQUIRED, help=False),
    Verb.ENACT: Rule(Who.PLAYER, Args.REQUIRED, help=False),
    Verb.VETO: Rule(Who.PLAYER, Args.NONE, help=False),
    Verb.ACCEPT: Rule(Who.PLAYER, Args.NONE, help=False),
    Verb.REFUSE: Rule(Who.PLAYER, Args.NONE, help=False),
}
"""Every verb's rule (a test checks every verb has one, and words in every catalog language)."""


def offered(verb: Verb, caps: Offers) -> bool:
    """True if a person at a channel with these capabilities is offered the verb (help names it, the README's
    table shows it): the channel's own ``verbs``, and the words about what texts cost only where texts cost."""
    if caps.verbs is not None and verb.value not in caps.verbs:
        return False
    return caps.paid_per_message or not RULES[verb].paid


_HOST_COMMANDS: Final[Mapping[Verb, HostCommand]] = {
    Verb.PAUSE: HostCommand.PAUSE,
    Verb.RESUME: HostCommand.RESUME,
    Verb.NUDGE: HostCommand.NUDGE,
    Verb.ENDGAME: HostCommand.END,
    Verb.REMATCH: HostCommand.REMATCH,
    Verb.HOSTONLY: HostCommand.PUBLIC_TO_HOST,
    Verb.ALLPHONES: HostCommand.PUBLIC_TO_ALL,
    Verb.COST: HostCommand.COST,
}
_QUERIES: Final[Mapping[Verb, Query]] = {
    Verb.HELP: Query.HELP,
    Verb.RULES: Query.RULES,
    Verb.BOARD: Query.BOARD,
    Verb.WHOAMI: Query.WHOAMI,
    Verb.WAITING: Query.WAITING,
}
_DECISIONS: Final[Mapping[Verb, str]] = {
    Verb.NOMINATE: "nominate",
    Verb.INVESTIGATE: "investigate",
    Verb.ELECT: "special_election",
    Verb.EXECUTE: "execute",
    Verb.DISCARD: "discard",
    Verb.ENACT: "enact",
}
_NUMBER: Final = re.compile(r"\W*(\d{1,2})\W*")
"""``2``, ``#2``, ``2.``, ``(2)``: an option's number."""


ZWNJ: Final = "\u200c"
"""The zero-width non-joiner: Persian writes it inside a word between parts whose letters must not join (``می‌روم``,
``علی‌رضا``). Folded to a space: a keyboard without it makes people type a space, and the grammar reads a word
written as two (``new game``) as one, while a name is also matched without its spaces (``names``)."""

_SAME_LETTERS: Final[Mapping[str, str]] = {
    "ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "\u0131": "i",
    # Arabic and Persian letters people type for each other (an Arabic keyboard's yeh and kaf for Persian's; a
    # final teh marbuta or heh with hamza for heh). Hamza and madda on alef, waw and yeh are marks NFKD splits off.
    "\u064a": "\u06cc", "\u0649": "\u06cc",  # Arabic yeh and alef maksura: Persian yeh
    "\u0643": "\u06a9",  # Arabic kaf: Persian keheh
    "\u0629": "\u0647", "\u06d5": "\u0647",  # teh marbuta, and heh with hamza (its hamza a mark): heh
    "\u0671": "\u0627",  # alef wasla: alef
    "\u0640": "",  # the tatweel only stretches a word
    ZWNJ: " ",
}
"""Letters that are one letter as words are compared, after accents and other marks are gone."""


def _folded(c: str) -> str:
    if c in _SAME_LETTERS:
        return _SAME_LETTERS[c]
    if c.isdecimal():
        return str(unicodedata.decimal(c))  # Persian ۲ and Arabic-Indic ٢ are 2
    if unicodedata.category(c) == "Cf":
        return ""  # direction marks, isolates around a copied name, joiners: invisible, typed or not
    return c


def fold(text: str) -> str:
    """Text as words and names are compared, in any script: case-folded, accents and other marks dropped, letters
    people type for each other made one (``ي`` is ``ی``, ``ك`` is ``ک``), digits ASCII, punctuation dropped, single
    spaces (``José`` is ``jose``, ``Dafür!`` is ``dafur``, ``Алексей`` stays ``алексей``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(_folded(c) for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]", " ", plain).split())


def word_key(word: str) -> str:
    """A command word as the grammar looks it up: folded, without spaces (``new game`` and ``newgame``, ``A favor``,
    ``گوشی‌جدید`` typed with its non-joiner, a space or neither are each one word)."""
    return fold(word).replace(" ", "")


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of any script written in ASCII (``۱۲`` is ``12``)."""
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


@dataclass(frozen=True, slots=True)
class Grammar:
    """Every word of every catalog, by verb, and which verb each word means."""

    words: Mapping[Verb, tuple[str, ...]]
    """Each verb's words as the catalogs write them, English first (the first is the one help shows)."""
    meaning: Mapping[str, Verb]
    """A word's ``word_key`` -> verb."""
    cards: Mapping[str, str]
    """Folded card or policy word of every theme and language -> ``L`` or ``F``."""
    not_names: frozenset[str] = frozenset()
    """Folded words of every catalog's ``NOT_NAMES``: "You is the President" would tell every reader it is them."""
    switches: Mapping[str, bool] = field(default_factory=dict)
    """Folded words of every catalog's ``SWITCH_ON`` (True) and ``SWITCH_OFF`` (False)."""
    quit_words: frozenset[str] = frozenset()
    """Folded words of every catalog's ``QUIT``."""
    before_names: frozenset[str] = frozenset()
    """Folded words of every catalog's ``BEFORE_NAMES``: skipped before a name ("acuso a Bob" accuses Bob)."""
    name_endings: frozenset[str] = frozenset()
    """Folded endings of every catalog's ``NAME_ENDINGS`` (``names.inflected_candidates``)."""

    def verb(self, word: str, reserved: Iterable[str] = ()) -> Verb | None:
        """The verb a word means, unless the channel's carrier keeps the word."""
        if fold(word) in {fold(r) for r in reserved}:
            return None
        return self.meaning.get(word_key(word))

    def shown(self, verb: Verb, language: str = DEFAULT_LANGUAGE, reserved: Iterable[str] = ()) -> str | None:
        """The word help shows for a verb in a language (its first that the carrier does not keep), or None."""
        kept = {fold(r) for r in reserved}
        own = _words_of(language).get(verb, ()) + self.words.get(verb, ())
        return next((w for w in own if fold(w) not in kept), None)

    def alone(self, text: str, reserved: Iterable[str] = ()) -> Verb | None:
        """The verb a line is the word of, if that is all the line says and the verb needs more after it
        (``rename``, ``claim``, ``accuse`` typed alone: ``parse`` reads no command in them); else None."""
        verb = self.verb("".join(text.split()), reserved)
        return verb if verb is not None and RULES[verb].args is Args.REQUIRED else None

    def parse(self, text: str, reserved: Iterable[str] = ()) -> Command | None:
        """The command a typed line means; None for free text (an answer by name, a typo)."""
        line = " ".join(text.split())
        if not line:
            return None
        if line == "?":
            return None if "?" in reserved else Ask(Query.HELP)
        numbered = _NUMBER.fullmatch(line)
        if numbered is not None:
            return Choose(ascii_digits(numbered.group(1)))
        # A command word may be written as two or three: "new game Ann", "neuer Tisch Anna", "who am I".
        parts = line.split(" ")
        taken = next((n for n in (3, 2) if self.verb("".join(parts[:n]), reserved) is not None), 1)
        head, rest = "".join(parts[:taken]), " ".join(parts[taken:])
        verb = self.verb(head, reserved)
        if verb is None:
            return None
        rule = RULES[verb]
        rest = rest.strip()
        if rule.args is Args.NONE and rest:
            return None  # "pause for a minute" is talk, not the command
        if rule.args is Args.REQUIRED and not rest:
            return None
        return self._command(verb, rest)

    def _command(self, verb: Verb, rest: str) -> Command | None:
        match verb:
            case _ if verb in _QUERIES:
                return Ask(_QUERIES[verb])
            case _ if verb in _HOST_COMMANDS:
                return Host(_HOST_COMMANDS[verb])
            case _ if verb in _DECISIONS:
                kind = _DECISIONS[verb]
                if kind in ("discard", "enact"):
                    return Decide(kind, self.cards.get(fold(rest), rest))
                return Decide(kind, rest)
            case Verb.JA | Verb.NEIN:
                return Decide("vote", verb.value)
            case Verb.VETO:
                return Decide("veto")
            case Verb.ACCEPT | Verb.REFUSE:
                return Decide("veto_reply", "yes" if verb is Verb.ACCEPT else "no")
            case Verb.LANGUAGE:
                return SetLanguage(rest.lower())  # alone: the languages there are
            case Verb.THEME:
                return SetTheme(rest.lower()) if rest else Ask(Query.HELP)
            case Verb.RENAME:
                return Rename(rest)
            case Verb.OPEN:
                return OpenTable(rest)
            case Verb.JOIN:
                code, _, name = rest.partition(" ")
                return Join(ascii_digits(code).upper(), name.strip())
            case Verb.LEAVE:
                return Leave()
            case Verb.START:
                return Start()
            case Verb.SEATS:
                if not rest:
                    return Ask(Query.BOARD)
                return Seating(_names_typed(rest))
            case Verb.MOVE:
                name, _, place = rest.rpartition(" ")
                position = number(place)
                return MoveSeat(name, position) if name and position is not None else None
            case Verb.REMOVE:
                return RemoveSeat(rest)
            case Verb.COMPUTERS:
                if not rest:
                    return AddComputers()
                count = number(rest)
                return None if count is None else AddComputers(count)
            case Verb.NEWPHONE:
                return MovePhone(rest)
            case Verb.TABLEVOTES:
                on = self._switch(rest)
                return None if on is None else SetTableVoting(on)
            case Verb.REMINDERS:
                if (minutes := number(rest)) is not None:
                    return SetReminders(minutes)
                on = self._switch(rest)
                return None if on is None else SetReminders(REMINDER_MINUTES if on else None)
            case Verb.STANDIN | Verb.RETURN:
                return StandIn(rest, back=verb is Verb.RETURN)
            case Verb.CLAIM | Verb.ACCUSE | Verb.TRUST:
                return Speak(verb.value, rest)
            case Verb.VOTES:
                return RecordVotes(_names_typed(rest))
        return None

    def _switch(self, word: str) -> bool | None:
        """``on``/``off`` (the catalogs' switch words, and the vote words: ja means on)."""
        folded = fold(word)
        if folded in self.switches:
            return self.switches[folded]
        verb = self.meaning.get(word_key(word))
        return True if verb is Verb.JA else False if verb is Verb.NEIN else None


COMMAS: Final = ",\u060c\uff0c\u3001"
"""What separates the names of a typed list: the Latin comma, the Arabic-script one Persian keyboards type (``،``),
and the full-width and ideographic ones."""


def _names_typed(rest: str) -> tuple[str, ...]:
    """A typed list of names: its parts between commas (any of ``COMMAS``), or the whole list as one part where
    there is no comma (``names.names_in`` then reads a part's words as whole names: "Computer 1" is one name)."""
    return tuple(n for n in re.split(rf"\s*[{COMMAS}]\s*", rest.strip()) if n)


@lru_cache(maxsize=8)
def _grammar(root: str) -> Grammar:
    words: dict[Verb, list[str]] = {verb: [] for verb in Verb}
    cards: dict[str, str] = {}
    not_names: set[str] = set()
    switches: dict[str, bool] = {}
    quit_words: set[str] = set()
    before_names: set[str] = set()
    name_endings: set[str] = set()
    files = [(t, lang) for t in themes() for lang in languages(t)]
    files.sort(key=lambda f: (f[1] != DEFAULT_LANGUAGE, f[0] != DEFAULT_THEME))  # English classic first
    for theme, lang in files:
        catalog = Catalog.load(theme, lang)
        for verb, own in _words_of(lang, theme).items():
            words[verb].extend(w for w in own if w not in words[verb])
        for key, verb in (("ja", Verb.JA), ("nein", Verb.NEIN)):
            term = catalog.term(key)
            if term not in words[verb]:
                words[verb].append(term)
        for key in ("liberal_card", "liberal_policy", "liberal", "fascist_card", "fascist_policy", "fascist"):
            cards[fold(catalog.term(key))] = "L" if key.startswith("liberal") else "F"
        listed = _listed(lang, theme)
        not_names |= {fold(w) for w in listed.get(NOT_NAMES, "").split(",") if fold(w)}
        quit_words |= {fold(w) for w in listed.get(QUIT, "").split(",") if fold(w)}
        before_names |= {fold(w) for w in listed.get(BEFORE_NAMES, "").split(",") if fold(w)}
        name_endings |= {fold(w) for w in listed.get(NAME_ENDINGS, "").split(",") if fold(w)}
        for key, on in ((SWITCH_ON, True), (SWITCH_OFF, False)):
            switches |= {fold(w): on for w in listed.get(key, "").split(",") if fold(w)}
    cards |= {"l": "L", "f": "F"}
    meaning: dict[str, Verb] = {}
    for verb, all_words in words.items():
        for word in all_words:
            if word_key(word):  # "?" is read before any word (``parse``)
                meaning.setdefault(word_key(word), verb)
    return Grammar({v: tuple(w) for v, w in words.items()}, meaning, cards, frozenset(not_names), switches,
                   frozenset(quit_words), frozenset(before_names), frozenset(name_endings))


def grammar() -> Grammar:
    """The grammar of the catalogs in use (read once per messages folder)."""
    return _grammar(str(messages_dir()))


def _listed(language: str, theme: str = DEFAULT_THEME) -> Mapping[str, str]:
    """One catalog file's ``[words]`` as written (no fallback; empty if the file does not exist)."""
    path = messages_dir() / theme / f"{language}.toml"
    return read_file(path).words if path.is_file() else {}


@lru_cache(maxsize=16)
def _words_of(language: str, theme: str = DEFAULT_THEME) -> dict[Verb, tuple[str, ...]]:
    """One catalog file's ``[words]`` (no fallback): verb -> its words, as written."""
    raw = _listed(language, theme)
    return {Verb(k): tuple(w.strip() for w in v.split(",") if w.strip()) for k, v in raw.items() if k in _VERB_KEYS}


def conflicts() -> list[str]:
    """Words two verbs claim (a test keeps this empty): ``"word: verb, verb"``."""
    seen: dict[str, set[Verb]] = {}
    for verb, listed in grammar().words.items():
        for word in listed:
            seen.setdefault(word_key(word), set()).add(verb)
    return [f"{w}: {', '.join(sorted(v))}" for w, v in sorted(seen.items()) if len(v) > 1]
