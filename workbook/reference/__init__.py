"""Reference implementation of the spec: plain functions, one module per concept.

Each function cites its spec section (``../shared/spec``) and carries units in its names.
The workbook's formulas are written separately; ``workbook verify`` proves both agree.
"""
