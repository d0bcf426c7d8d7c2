"""Internal: the assemble stage: template AST + resolved profile + run context ->
``ContextFrame`` (:mod:`.assemble`), with the macro catalogue (:mod:`.macros`), the marker
check (:mod:`.markers`), the resource each macro reads (:mod:`.visibility`) and the parts a
profile requires (:mod:`.required`)."""
