"""Code generation: graph + plan -> model.c / model.h for the C kernel library.

emit.emit_c(plan, ...) dispatches on the plan's kind (model_c.generate: layer by layer;
fused_c.generate: fused blocks and split regions). The package's own import is light (no
submodule): firmware/toolchain.py imports c_text.c_string without loading the generator.
"""
