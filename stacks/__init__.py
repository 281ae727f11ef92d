"""Pulumi programs of the project: `eni` (real AWS), `multipool` (pools per datacenter), `local`."""
