"""The modules behind kquota's public Python API (``kquota.QuotaAdmin`` and friends).

Import the public names from :mod:`kquota`; the module layout here may change.
"""
