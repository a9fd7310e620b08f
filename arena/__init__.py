"""arena: a paper-trading arena where language-model agents bet play money on prediction markets."""

__version__ = "0.1.0"
