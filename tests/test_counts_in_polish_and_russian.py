"""Polish and Russian counts: every sentence that counts something, rendered with 1, 2, 5, 21, 22 and 25, says the
words a Polish or Russian reader expects (one, few and many: "1 gracz", "2 gracze", "5 graczy", "21 graczy";
"1 игрок", "2 игрока", "5 игроков", "21 игрок").

The expected words are written here from the grammar, not read from the catalogs: each sentence's forms for 1, 2 and
5, and which of them 21, 22 and 25 take (Polish: 21 like 5, as in "dwadzieścia jeden graczy"; Russian: 21 like 1, as
in "двадцать один игрок"; 22 like 2 and 25 like 5 in both)."""

from __future__ import annotations

import re
import string

import pytest

from moderator.catalog import PLURAL, Catalog, placeholders, themes

NUMBERS = (1, 2, 5, 21, 22, 25)
LIKE = {"pl": {1: 1, 2: 2, 5: 5, 21: 5, 22: 2, 25: 5}, "ru": {1: 1, 2: 2, 5: 5, 21: 1, 22: 2, 25: 5}}
"""Which of the forms for 1, 2 and 5 each number takes."""

Forms = tuple[str, str, str]
"""A count's words for 1, 2 and 5, "#" standing for the number."""

# Polish: the noun's case is the sentence's (nominative after a colon, genitive after "dla" and "do", instrumental
# after "z", locative after "po" and "przy").
PL_PLAYERS: Forms = ("# gracz", "# gracze", "# graczy")
PL_PLAYERS_GENITIVE: Forms = ("# gracza", "# graczy", "# graczy")
PL_PLAYERS_BE: Forms = ("jest # gracz", "są # gracze", "jest # graczy")
PL_VOTES: Forms = ("# głos", "# głosy", "# głosów")
PL_CARDS_ACCUSATIVE: Forms = ("# kartę", "# karty", "# kart")
PL_MINUTES_ACCUSATIVE: Forms = ("# minutę", "# minuty", "# minut")
PL_MINUTES_LOCATIVE: Forms = ("# minucie", "# minutach", "# minutach")
PL_SECONDS: Forms = ("# sekundę", "# sekundy", "# sekund")
PL_COMPUTERS: Forms = ("Dołącza # gracz komputerowy", "Dołączają # gracze komputerowi",
                       "Dołącza # graczy komputerowych")
PL_ONLY_COMPUTERS: Forms = ("Dołącza tylko # gracz komputerowy", "Dołączają tylko # gracze komputerowi",
                            "Dołącza tylko # graczy komputerowych")
POLISH: dict[tuple[str, str, str], Forms] = {
    ("messages", "game-started", "players"): PL_PLAYERS_GENITIVE,
    ("messages", "vote-progress", "cast"): ("Oddano # głos", "Oddano # głosy", "Oddano # głosów"),
    ("messages", "deck-reshuffled", "count"): PL_CARDS_ACCUSATIVE,
    ("messages", "board-waiting-votes", "cast"): ("oddano # głos", "oddano # głosy", "oddano # głosów"),
    ("messages", "replay-game", "players"): PL_PLAYERS_GENITIVE,
    ("messages", "replay-vote-counted", "cast"): PL_VOTES,
    ("messages", "replay-vote-changed-counted", "cast"): PL_VOTES,
    ("messages", "replay-vote-progress", "cast"): PL_VOTES,
    ("messages", "replay-reshuffled", "count"): PL_CARDS_ACCUSATIVE,
    ("messages", "table-joined", "players"): PL_PLAYERS_BE,
    ("messages", "seat-taken", "players"): PL_PLAYERS,
    ("messages", "seats-list", "players"): PL_PLAYERS,
    ("messages", "seat-left", "players"): PL_PLAYERS,
    ("messages", "renamed", "players"): PL_PLAYERS,
    ("messages", "you-renamed", "players"): PL_PLAYERS,
    ("messages", "computers-added", "added"): PL_COMPUTERS,
    ("messages", "computers-added", "players"): PL_PLAYERS,
    ("messages", "computers-added-full", "added"): PL_ONLY_COMPUTERS,
    ("messages", "computers-added-full", "most"): ("# miejsce", "# miejsca", "# miejsc"),
    ("messages", "computers-added-full", "players"): PL_PLAYERS,
    ("messages", "computers-none", "players"): PL_PLAYERS_BE,
    ("messages", "computers-none", "most"): PL_PLAYERS_GENITIVE,
    ("messages", "game-starting", "players"): ("# graczem", "# graczami", "# graczami"),
    ("messages", "table-full", "most"): PL_PLAYERS,
    ("messages", "player-count", "most"): PL_PLAYERS_GENITIVE,
    ("messages", "player-count", "players"): ("jest #", "są #", "jest #"),
    ("messages", "reminders-set", "minutes"): PL_MINUTES_LOCATIVE,
    ("messages", "reminder", "minutes"): PL_MINUTES_ACCUSATIVE,
    ("messages", "sms-cost", "segments"): ("# segment SMS", "# segmenty SMS", "# segmentów SMS"),
    ("messages", "sms-cost-delivery", "segments"): ("# segment SMS", "# segmenty SMS", "# segmentów SMS"),
    ("messages", "try-again", "seconds"): PL_SECONDS,
    ("messages", "open-try-again", "minutes"): PL_MINUTES_ACCUSATIVE,
    ("messages", "web-open-try-again", "seconds"): PL_SECONDS,
    ("messages", "web-pin-wait", "seconds"): PL_SECONDS,
    ("messages", "web-reminders-after", "minutes"): PL_MINUTES_LOCATIVE,
    ("messages", "rules-powers", "players"): ("# graczu", "# graczach", "# graczach"),
    ("sms", "seat-left", "players"): PL_PLAYERS,
    ("sms", "game-started", "players"): PL_PLAYERS,
    ("sms", "deck-reshuffled", "count"): ("# karta", "# karty", "# kart"),
    ("sms", "seat-taken", "players"): PL_PLAYERS,
    ("sms", "computers-added", "added"): PL_COMPUTERS,
    ("sms", "computers-added", "players"): PL_PLAYERS,
    ("sms", "computers-added-full", "added"): PL_ONLY_COMPUTERS,
    ("sms", "computers-added-full", "players"): PL_PLAYERS,
    ("sms", "game-starting", "players"): PL_PLAYERS,
}

# Russian: nominative after a colon, genitive after "до", prepositional after "при", accusative after "через".
RU_PLAYERS: Forms = ("# игрок", "# игрока", "# игроков")
RU_PLAYERS_GENITIVE: Forms = ("# игрока", "# игроков", "# игроков")
RU_VOTES: Forms = ("подан # голос", "подано # голоса", "подано # голосов")
RU_CARDS: Forms = ("# карта", "# карты", "# карт")
RU_MINUTES: Forms = ("# минуту", "# минуты", "# минут")
RU_SECONDS: Forms = ("# секунду", "# секунды", "# секунд")
RU_SEGMENTS: Forms = ("# SMS-сегмент", "# SMS-сегмента", "# SMS-сегментов")
RU_COMPUTERS: Forms = ("Присоединяется # компьютерный игрок", "Присоединяются # компьютерных игрока",
                       "Присоединяются # компьютерных игроков")
RU_ONLY_COMPUTERS: Forms = ("Присоединяется только # компьютерный игрок", "Присоединяются только # компьютерных игрока",
                            "Присоединяются только # компьютерных игроков")
RUSSIAN: dict[tuple[str, str, str], Forms] = {
    ("messages", "game-started", "players"): RU_PLAYERS,
    ("messages", "vote-progress", "cast"): ("Подан # голос", "Подано # голоса", "Подано # голосов"),
    ("messages", "deck-reshuffled", "count"): RU_CARDS,
    ("messages", "board-waiting-votes", "cast"): RU_VOTES,
    ("messages", "replay-game", "players"): RU_PLAYERS,
    ("messages", "replay-vote-counted", "cast"): RU_VOTES,
    ("messages", "replay-vote-changed-counted", "cast"): RU_VOTES,
    ("messages", "replay-vote-progress", "cast"): ("Подан # голос", "Подано # голоса", "Подано # голосов"),
    ("messages", "replay-reshuffled", "count"): RU_CARDS,
    ("messages", "table-joined", "players"): RU_PLAYERS,
    ("messages", "seat-taken", "players"): RU_PLAYERS,
    ("messages", "seats-list", "players"): RU_PLAYERS,
    ("messages", "seat-left", "players"): RU_PLAYERS,
    ("messages", "renamed", "players"): RU_PLAYERS,
    ("messages", "you-renamed", "players"): RU_PLAYERS,
    ("messages", "computers-added", "added"): RU_COMPUTERS,
    ("messages", "computers-added", "players"): RU_PLAYERS,
    ("messages", "computers-added-full", "added"): RU_ONLY_COMPUTERS,
    ("messages", "computers-added-full", "most"): ("# место", "# места", "# мест"),
    ("messages", "computers-added-full", "players"): RU_PLAYERS,
    ("messages", "computers-none", "players"): RU_PLAYERS,
    ("messages", "computers-none", "most"): RU_PLAYERS_GENITIVE,
    ("messages", "game-starting", "players"): RU_PLAYERS,
    ("messages", "table-full", "most"): RU_PLAYERS,
    ("messages", "player-count", "most"): RU_PLAYERS_GENITIVE,
    ("messages", "player-count", "players"): RU_PLAYERS,
    ("messages", "reminders-set", "minutes"): RU_MINUTES,
    ("messages", "reminder", "minutes"): RU_MINUTES,
    ("messages", "sms-cost", "segments"): RU_SEGMENTS,
    ("messages", "sms-cost-delivery", "segments"): RU_SEGMENTS,
    ("messages", "try-again", "seconds"): RU_SECONDS,
    ("messages", "open-try-again", "minutes"): RU_MINUTES,
    ("messages", "web-open-try-again", "seconds"): RU_SECONDS,
    ("messages", "web-pin-wait", "seconds"): RU_SECONDS,
    ("messages", "web-reminders-after", "minutes"): RU_MINUTES,
    ("messages", "rules-powers", "players"): ("# игроке", "# игроках", "# игроках"),
    ("sms", "seat-left", "players"): RU_PLAYERS,
    ("sms", "game-started", "players"): RU_PLAYERS,
    ("sms", "deck-reshuffled", "count"): RU_CARDS,
    ("sms", "seat-taken", "players"): RU_PLAYERS,
    ("sms", "computers-added", "added"): RU_COMPUTERS,
    ("sms", "computers-added", "players"): RU_PLAYERS,
    ("sms", "computers-added-full", "added"): RU_ONLY_COMPUTERS,
    ("sms", "computers-added-full", "players"): RU_PLAYERS,
    ("sms", "game-starting", "players"): RU_PLAYERS,
}
EXPECTED = {"pl": POLISH, "ru": RUSSIAN}


def counted(catalog: Catalog) -> set[tuple[str, str, str]]:
    """Every (table, message id, count) of a catalog whose template gives the count its plural forms, as the
    catalog renders it (the most specific file that has the id)."""
    found = set()
    for table in ("messages", "sms"):
        ids = {key for f in catalog.files for key in getattr(f, table)}
        for key in ids:
            template = catalog.template(key, sms=table == "sms")
            if table == "sms" and template == catalog.template(key):
                continue  # no SMS variant: the long sentence, checked as such
            for _, field, spec, _ in string.Formatter().parse(template):
                if field and spec and spec.startswith(PLURAL):
                    found.add((table, key, field))
    return found


def render(catalog: Catalog, table: str, key: str, n: int) -> str:
    """The sentence with every count at ``n`` and every other value a placeholder word."""
    template = catalog.template(key, sms=table == "sms")
    counts = {field for _, field, spec, _ in string.Formatter().parse(template) if field and spec and
              spec.startswith(PLURAL)}
    values: dict[str, object] = {p: n if p in counts else "X" for p in placeholders(template) if "." not in p}
    return catalog.text(key, sms=table == "sms", **values)


CASES = [(theme, lang) for lang in EXPECTED for theme in themes()]


@pytest.mark.parametrize("theme,lang", CASES)
def test_every_counted_sentence_is_listed_with_its_words(theme: str, lang: str) -> None:
    """A new sentence that counts something needs its words here (and a sentence gone, its entry gone)."""
    assert counted(Catalog.load(theme, lang)) == set(EXPECTED[lang])


@pytest.mark.parametrize("theme,lang", CASES)
@pytest.mark.parametrize("n", NUMBERS)
def test_a_count_says_the_words_its_number_takes(theme: str, lang: str, n: int) -> None:
    catalog = Catalog.load(theme, lang)
    wrong = []
    for (table, key, count), forms in EXPECTED[lang].items():
        text = render(catalog, table, key, n)
        expected = forms[(1, 2, 5).index(LIKE[lang][n])].replace("#", str(n))
        # Whole words, and the number whole: "2 gracze" is not found in "22 gracze", nor "5 gracz" in "5 graczy".
        if not re.search(r"(?<!\d)" + re.escape(expected) + r"(?!\w)", text):
            wrong.append(f"[{table}] {key} {{{count}}}={n}: wanted {expected!r} in {text!r}")
    assert not wrong, "\n".join(wrong)


def test_polish_and_russian_differ_at_twenty_one() -> None:
    """The rule the table above states, in two real sentences: Polish 21 is plural, Russian 21 singular."""
    pl, ru = Catalog.load("classic", "pl"), Catalog.load("classic", "ru")
    assert "Kart zostało mniej niż trzy" in pl.text("deck-reshuffled", count=21)
    assert pl.text("deck-reshuffled", count=21).endswith("ma teraz 21 kart.")
    assert pl.text("deck-reshuffled", count=22).endswith("ma teraz 22 karty.")
    assert ru.text("deck-reshuffled", count=21).endswith("теперь 21 карта.")
    assert ru.text("deck-reshuffled", count=25).endswith("теперь 25 карт.")
