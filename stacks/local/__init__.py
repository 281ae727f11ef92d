"""The `local` Pulumi program (see program.py)."""
