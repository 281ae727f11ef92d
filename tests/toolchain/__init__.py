"""The real test toolchain: pinned versions, where binaries are found, and how they are built."""
