"""Models of emulator."""
