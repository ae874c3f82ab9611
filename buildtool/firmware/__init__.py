"""Firmware: the board toolchain (compile, link, fit), running an image natively or in an emulator, its profile."""
