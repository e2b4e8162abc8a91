"""The ``infill`` command-line tool."""
