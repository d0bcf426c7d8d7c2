"""Internal: SillyTavern's engines over plain text and values: its macros
(:mod:`compiler.st.macros`, public) and the clock they read (:mod:`.clock`)."""
