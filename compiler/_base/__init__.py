"""Internal: the base stage, below every other: the ``ContextFrame`` the stages pass and its
kinds (:mod:`.frame`, :mod:`.kinds`), the journal of events (:mod:`.journal`), atomic file
writes (:mod:`.atomic`), the one converter of validation errors (:mod:`.validation`) and
token counting (:mod:`.tokens`)."""
