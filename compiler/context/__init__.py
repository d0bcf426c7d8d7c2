"""The run context and its readers: chat, character cards, world info, workspace."""
