"""Internal: SillyTavern's engines over read inputs: its macros (:mod:`compiler.st.macros`,
public) and the clock they read (:mod:`.clock`), the world-info engine
(:mod:`compiler.st.world`: activation, placement and the lorebook debugger's report), regex
scripts (:mod:`.regex_scripts`, :mod:`.regex_run`) and the translation of JavaScript regular
expressions (:mod:`.js_regex`), the chat's macros (:mod:`.chat_macros`)."""
