"""A faithful local implementation of the Media Generation Service.

It never imports `mediagen`: the client and the sandbox are two sides of one contract
(`docs/wire-contract.md`) and check each other.
"""

from importlib.metadata import PackageNotFoundError, version

# One distribution ships both packages; its metadata holds the one release number.
try:
    __version__ = version("mediagen")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
