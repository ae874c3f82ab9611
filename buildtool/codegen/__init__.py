"""Code generation: graph + arena plan -> model.c / model.h for the C kernel library."""

from .model_c import generate

__all__ = ["generate"]
