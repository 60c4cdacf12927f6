"""The README's table of commands by channel agrees with the grammar: every typed word it shows is the word the
grammar takes on that channel (and help names), and no cell a person at that seat would expect is blank.

``python -m tests.test_readme_commands`` prints the table as it should read, to paste into the README.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from moderator import render
from moderator.catalog import Catalog
from moderator.channels import Capabilities
from moderator.commands import Ask, Query
from moderator.grammar import RULES, Verb, Who, grammar, offered
from moderator.transports import console, sms, telegram, whatsapp

README: Final = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- commands: start -->", "<!-- commands: end -->"

TYPED: Final[dict[str, Capabilities]] = {
    "console": console.CAPABILITIES,
    "Telegram": telegram.CAPABILITIES,
    "SMS": sms.CAPABILITIES,
    "WhatsApp": whatsapp.CAPABILITIES,
}
ARGUMENTS: Final[dict[Verb, str]] = {
    Verb.LANGUAGE: "[code]",
    Verb.RENAME: "name",
    Verb.OPEN: "[your name]",
    Verb.JOIN: "CODE name",
    Verb.SEATS: "[names]",
    Verb.MOVE: "name N",
    Verb.REMOVE: "name",
    Verb.COMPUTERS: "[n]",
    Verb.NEWPHONE: "name",
    Verb.TABLEVOTES: "on/off",
    Verb.REMINDERS: "N/on/off",
    Verb.THEME: "name",
    Verb.STANDIN: "name",
    Verb.RETURN: "name",
    Verb.VOTES: "names",
    Verb.CLAIM: "cards, or name party",
    Verb.ACCUSE: "name",
    Verb.TRUST: "name",
}
"""What follows a verb's word, as the README writes it."""
BROWSER: Final[dict[Verb, str]] = {
    Verb.HELP: "every choice is a button",
    Verb.RULES: "\"Rules in short\" on every page",
    Verb.BOARD: "on the page and the table screen",
    Verb.WHOAMI: "\"What you know\", behind a cover",
    Verb.WAITING: "on the page and the table screen",
    Verb.LANGUAGE: "\"You\" on the seat's page; the table screen's on the host page",
    Verb.RENAME: "\"You\" on the seat's page",
    Verb.OPEN: "`/` on the laptop (or `moderator play --web`)",
    Verb.JOIN: "scan the QR code",
    Verb.LEAVE: "\"You\" on the seat's page, in the lobby",
    Verb.START: "host page",
    Verb.SEATS: "host page: ↑ beside a name",
    Verb.MOVE: "host page: ↑ beside a name",
    Verb.REMOVE: "host page",
    Verb.COMPUTERS: "host page (fill, or how many)",
    Verb.NEWPHONE: "host page: \"New device\" shows a QR code",
    Verb.TABLEVOTES: "host page, in the lobby",
    Verb.REMINDERS: "host page",
    Verb.PAUSE: "host page",
    Verb.RESUME: "host page",
    Verb.NUDGE: "host page",
    Verb.ENDGAME: "host page",
    Verb.REMATCH: "host page",
    Verb.THEME: "host page",
    Verb.STANDIN: "host page, beside a name",
    Verb.RETURN: "host page, beside a name",
    Verb.VOTES: "the President's page: tick who voted Ja",
    Verb.CLAIM: "\"Say it to the table\" on the seat's page",
    Verb.ACCUSE: "\"Say it to the table\" on the seat's page",
    Verb.TRUST: "\"Say it to the table\" on the seat's page",
}
"""Where the browser puts each command (a page has controls, not typed words)."""
NOT_HERE: Final = "\u2013"  # an en dash: nothing to type here


def verbs() -> list[Verb]:
    """The rows: every verb help lists."""
    return [verb for verb, rule in RULES.items() if rule.help]


def typed_cell(verb: Verb, channel: str) -> str:
    """What a person at a seat of this channel types for the verb, from the grammar; a dash if it is not theirs."""
    caps = TYPED[channel]
    if not offered(verb, caps):
        return NOT_HERE
    word = grammar().shown(verb, "en", caps.reserved_words)
    if word is None:
        return NOT_HERE
    arguments = ARGUMENTS.get(verb)
    return f"`{caps.word_style.write(word)}{' ' + arguments if arguments else ''}`"


def table() -> str:
    """The README's table of commands by channel, as it should read."""
    catalog = Catalog.load("classic", "en")
    lines = ["| command | who | console | Telegram | SMS | WhatsApp | browser |", "|---|---|---|---|---|---|---|"]
    for verb in verbs():
        who = {Who.HOST: "host", Who.ANYONE: "anyone", Who.PLAYER: "a player"}[RULES[verb].who]
        cells = [typed_cell(verb, channel) for channel in TYPED]
        lines.append(f"| {catalog.text(f'word-{verb.value}')} | {who} | " + " | ".join(cells)
                     + f" | {BROWSER.get(verb, NOT_HERE)} |")
    return "\n".join(lines)


def readme_table() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(re.escape(START) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    assert found is not None, f"README.md has no {START} … {END} block"
    return found.group(1).strip()


def test_the_readmes_commands_table_is_the_grammars() -> None:
    assert readme_table() == table(), "README's commands table differs; run python -m tests.test_readme_commands"


def test_every_word_in_the_table_is_one_the_channel_parses() -> None:
    for verb in verbs():
        for channel, caps in TYPED.items():
            cell = typed_cell(verb, channel)
            if cell == NOT_HERE:
                continue
            word = cell.strip("`").split(" ")[0].lstrip("/")
            if word == "?":  # read before any word: help
                assert grammar().parse("?", caps.reserved_words) == Ask(Query.HELP), channel
                continue
            assert grammar().verb(word, caps.reserved_words) is verb, (channel, word)


def test_no_cell_a_player_would_expect_is_blank() -> None:
    for verb in verbs():
        assert typed_cell(verb, "SMS") != NOT_HERE, verb  # Twilio's own words aside, every verb has an SMS word
        if not RULES[verb].paid:
            assert typed_cell(verb, "Telegram") != NOT_HERE, verb
            assert verb in BROWSER, f"the browser has no place for {verb}"


def help_words(caps: Capabilities) -> set[str]:
    """The words help names on a channel, for its host: a line's word before its colon, or a short form's list
    ("Any time: ?, RULES, BOARD.")."""
    lines = [line for m in render.help_messages(Catalog.load("classic", "en"), caps=caps, host=True)
             for line in m.text.split("\n") if ": " in line]
    if caps.text_limit is None:  # "rename Sam: ...": the word, then what follows it
        return {line.split(": ", 1)[0].split(" ")[0] for line in lines}
    return {w.strip() for line in lines for w in line.split(": ", 1)[1].rstrip(".").split(",")}


def test_help_on_each_channel_names_exactly_the_words_of_its_column() -> None:
    for channel, caps in TYPED.items():
        named = help_words(caps)
        for verb in verbs():
            cell = typed_cell(verb, channel)
            word = caps.word_style.write(grammar().shown(verb, "en", caps.reserved_words) or "")
            if cell == NOT_HERE:
                assert word not in named, (channel, word)  # help offers nothing the table says is not there
            else:
                assert cell.strip("`").split(" ")[0] in named, (channel, cell)


def test_sms_never_shows_a_word_twilio_keeps() -> None:
    kept = {w.upper() for w in sms.RESERVED_WORDS}
    for verb in verbs():
        cell = typed_cell(verb, "SMS")
        assert cell == NOT_HERE or cell.strip("`").split(" ")[0] not in kept, cell


if __name__ == "__main__":
    print(START)
    print(table())
    print(END)
