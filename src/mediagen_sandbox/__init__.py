"""A faithful local implementation of the Media Generation Service.

It never imports `mediagen`: the client and the sandbox are two sides of one contract
(`docs/wire-contract.md`) and check each other.
"""

__version__ = "0.1.0"
