"""Importable rules of the cilium-ipam policy pack (policies/__main__.py only serves them)."""
