"""buildtool: int8 TFLite CNN -> memory-planned microcontroller firmware."""

__version__ = "0.1.0"
