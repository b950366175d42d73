__version__ = version = "0.1.20+stand-in"
