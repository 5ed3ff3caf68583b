"""Fun GPU demos run as runner-protocol jobs; ``runner`` is the shared part, one package per demo."""
