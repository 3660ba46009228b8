"""stibium: a storage benchmark that road-tests file I/O."""
__version__ = "0.1.0"
