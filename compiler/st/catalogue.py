"""The SillyTavern ``{{macros}}`` the compiler fills, each with what it becomes: the list an
editor completes from (``apc lsp``).

Internal: the API is :func:`compiler.sillytavern_macros`. The names are :mod:`compiler.st.macros`'s
(``STANDARD_MACROS``, ``ENVIRONMENT_MACROS``) and the forms its engine substitutes.
"""

from __future__ import annotations

from compiler.st.macros import ENVIRONMENT_MACROS, STANDARD_MACROS

_FILLED: dict[str, str] = {
    "char": "the character's name",
    "user": "the user's (persona's) name",
    "persona": "the persona's description",
    "description": "the character card's description",
    "personality": "the character card's personality",
    "scenario": "the character card's scenario",
    "original": "the text this field replaces (only the first expands)",
    "mesExamples": "the card's example dialogues",
    "charVersion": "the character card's version",
    "char_version": "the character card's version",
    "input": "the user's latest message",
    "lastMessage": "the chat's last message",
    "lastUserMessage": "the chat's last user message",
    "lastCharMessage": "the chat's last character message",
    "model": "the compile's model",
    "maxPrompt": "the compile's token budget",
    "idle_duration": "the time since the last user message",
}

#: the forms the engine evaluates: the text an editor inserts -> what it becomes
_FORMS: dict[str, str] = {
    "newline": "a line break",
    "noop": "nothing",
    "trim": "removes itself and the line breaks around it",
    "// comment": "a comment: removed before anything else",
    "roll:1d20": "a dice roll (seeded: the same run gives the same roll)",
    "random::a::b": "one of the options, at random (seeded)",
    "pick::a::b": "one of the options, the same one for the same chat and text",
    "getvar::name": "a chat variable's value",
    "setvar::name::value": "sets a chat variable (nothing in the text)",
    "addvar::name::value": "adds to a chat variable (nothing in the text)",
    "incvar::name": "increments a chat variable and gives its new value",
    "decvar::name": "decrements a chat variable and gives its new value",
    "getglobalvar::name": "a global variable's value",
    "setglobalvar::name::value": "sets a global variable (nothing in the text)",
    "addglobalvar::name::value": "adds to a global variable (nothing in the text)",
    "incglobalvar::name": "increments a global variable and gives its new value",
    "decglobalvar::name": "decrements a global variable and gives its new value",
    "time": "the current time (the run context's now)",
    "date": "the current date",
    "weekday": "the current weekday",
    "isotime": "the current time, HH:mm",
    "isodate": "the current date, YYYY-MM-DD",
    "datetimeformat YYYY-MM-DD": "the current time in a moment.js format",
    "time_UTC+2": "the current time at a UTC offset",
}


def sillytavern_macros() -> dict[str, str]:
    """Every SillyTavern macro the compiler fills, as the text between ``{{`` and ``}}`` (a
    form such as ``random::a::b`` shows its arguments) -> what it becomes, in a stable
    order: the values from the run context, the environment's, then the engine's forms."""
    names = (*STANDARD_MACROS, *ENVIRONMENT_MACROS)
    return {**{name: _FILLED.get(name, "a value of the run") for name in names}, **_FORMS}
