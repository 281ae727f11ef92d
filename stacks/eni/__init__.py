"""The `eni` Pulumi program (see program.py)."""
