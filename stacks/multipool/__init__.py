"""The `multipool` Pulumi program (see program.py)."""
