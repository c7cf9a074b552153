"""The version of ncuwrap, read by the modules that write it into documents and reports (and by the
build: pyproject.toml), so that none of them imports the package root for it."""

__version__ = "0.1.0"
