"""The one place the release number is written: the build (hatch), the package and the
client's User-Agent all read it from here."""

__version__ = "0.1.0"
