"""ft's version: the one place it is written (the installed package's CMake and pkg-config)."""

FT_VERSION = "0.1.0"
